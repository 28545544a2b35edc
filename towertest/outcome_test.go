package towertest_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/towertest"
)

func TestOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		boom := errors.New("boom")
		o := towertest.Go(func() (int, error) {
			<-release
			return 7, boom
		})
		synctest.Wait()
		if o.Done() {
			t.Fatal("Done() = true before f returned")
		}
		close(release)
		if v, err := o.Wait(); v != 7 || err != boom {
			t.Errorf("Wait() = %v, %v; want 7, %v", v, err, boom)
		}
		if !o.Done() {
			t.Error("Done() = false after Wait")
		}
	})
}

// Elapsed measures from Go, Since from any start; both in virtual time.
func TestOutcomeTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		time.Sleep(10 * time.Millisecond)
		o := towertest.Go(func() (int, error) {
			time.Sleep(30 * time.Millisecond)
			return 1, nil
		})
		if got := o.Elapsed(); got != 30*time.Millisecond {
			t.Errorf("Elapsed() = %v, want 30ms", got)
		}
		if got := o.Since(start); got != 40*time.Millisecond {
			t.Errorf("Since(start) = %v, want 40ms", got)
		}
		// A later read gives the same time: it is when f returned.
		time.Sleep(time.Second)
		if got := o.Elapsed(); got != 30*time.Millisecond {
			t.Errorf("Elapsed() a second later = %v, want 30ms", got)
		}
	})
}

func TestOutcomeChecks(t *testing.T) {
	boom := errors.New("boom")
	ok := func() (string, error) { return "hello", nil }
	fails := func() (string, error) { return "", boom }
	tests := []struct {
		name  string
		f     func() (string, error)
		check func(testing.TB, *towertest.Outcome[string])
		want  []string // the failures the check reports
	}{
		{"ValueOK", ok, func(tb testing.TB, o *towertest.Outcome[string]) {
			if v := o.Value(tb); v != "hello" {
				tb.Errorf("Value returned %q", v)
			}
		}, nil},
		{"ValueError", fails, func(tb testing.TB, o *towertest.Outcome[string]) {
			o.Value(tb)
			tb.Errorf("Value went on after the error")
		}, []string{"got error boom, want a string"}},
		{"ExpectValueOK", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectValue(tb, "hello") }, nil},
		{"ExpectValueOther", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectValue(tb, "") },
			[]string{`got "hello", <nil>; want "", nil`}},
		{"ExpectValueError", fails, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectValue(tb, "") },
			[]string{`got "", boom; want "", nil`}},
		{"ExpectErrorOK", fails, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectError(tb, boom) }, nil},
		{"ExpectErrorNone", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectError(tb, boom) },
			[]string{`got "hello", <nil>; want error boom`}},
		{"ExpectErrorSameMessage", fails, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectError(tb, errors.New("boom")) },
			[]string{`got "", boom; want error boom`}},
		{"ExpectErrorMessageOK", fails, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectErrorMessage(tb, "boom") }, nil},
		{"ExpectErrorMessageNone", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectErrorMessage(tb, "boom") },
			[]string{`got "hello", <nil>; want error "boom"`}},
		{"ExpectErrorMessageOther", fails, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectErrorMessage(tb, "bang") },
			[]string{`got "", boom; want error "bang"`}},
		{"ExpectElapsedOK", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectElapsed(tb, 0) }, nil},
		{"ExpectElapsedOther", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectElapsed(tb, time.Second) },
			[]string{"returned after 0s, want 1s"}},
		{"ExpectPendingDone", ok, func(tb testing.TB, o *towertest.Outcome[string]) { o.ExpectPending(tb) },
			[]string{`returned "hello", <nil>; want it still waiting`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := towertest.Go(tt.f)
				got := failures(t, func(tb testing.TB) { tt.check(tb, o) })
				if !slices.Equal(got, tt.want) {
					t.Errorf("reported %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// ExpectPending passes while f waits, once the bubble has settled.
func TestOutcomeExpectPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		o := towertest.Go(func() (int, error) {
			<-release
			return 0, nil
		})
		o.ExpectPending(t)
		close(release)
		o.ExpectValue(t, 0)
	})
}
