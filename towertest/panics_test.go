package towertest_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/towergo/tower/towertest"
)

// recorder is a testing.TB that records its failures instead of failing.
// Its Fatalf ends the goroutine that calls it, as testing's does.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// failures runs check with a recorder over t, on a goroutine of its own so
// that a Fatalf ends only that goroutine, and returns what it reported.
func failures(t testing.TB, check func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	var wg sync.WaitGroup
	wg.Go(func() { check(r) })
	wg.Wait()
	return r.errors
}

func TestPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want []string // the failures Panics reports
	}{
		{"Match", func() { panic("bad input") }, nil},
		{"OtherValue", func() { panic(fmt.Errorf("other")) }, []string{`got panic "other", want "bad input"`}},
		{"NoPanic", func() {}, []string{`got panic "<nil>", want "bad input"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			towertest.Panics(r, "bad input", tt.f)
			if !slices.Equal(r.errors, tt.want) {
				t.Errorf("Panics reported %q, want %q", r.errors, tt.want)
			}
		})
	}
}
