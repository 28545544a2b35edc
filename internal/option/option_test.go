package option_test

import (
	"fmt"
	"testing"

	"github.com/towergo/tower/internal/option"
)

type options struct{ a, b int }

type Option func(*options)

func withA(v int) Option { return func(o *options) { o.a = v } }

func TestApplyInOrder(t *testing.T) {
	got := option.Apply("pkg.New", []Option{withA(1), withA(2), func(o *options) { o.b = o.a * 10 }})
	if want := (options{a: 2, b: 20}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestOntoKeepsDefaults(t *testing.T) {
	o := options{a: 5, b: 6}
	option.Onto("pkg.New", &o, []Option{withA(7)})
	if want := (options{a: 7, b: 6}); o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
}

func TestNilOptionPanics(t *testing.T) {
	defer func() {
		if got, want := fmt.Sprint(recover()), "pkg.New: option 1 is nil"; got != want {
			t.Errorf("panicked with %q, want %q", got, want)
		}
	}()
	option.Apply("pkg.New", []Option{withA(1), nil})
}

func ExampleApply() {
	o := option.Apply("pkg.New", []Option{withA(3)})
	fmt.Println(o.a)
	// Output: 3
}

func TestPanicIf(t *testing.T) {
	option.PanicIf(false, "pkg.New: n %d", 0) // no panic
	defer func() {
		if got, want := fmt.Sprint(recover()), "pkg.New: n must be at least 1, got 0"; got != want {
			t.Errorf("panicked with %q, want %q", got, want)
		}
	}()
	option.PanicIf(true, "pkg.New: n must be at least 1, got %d", 0)
	t.Error("PanicIf(true, ...) returned")
}
