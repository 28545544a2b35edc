package tower_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

type ctxKey struct{}

// f runs on success only, with the call's ctx, and may do work that takes
// time and fail; a call's error skips f; a Ready error comes back unchanged.
func TestAndThen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		var seen []string
		svc := tower.AndThen(mock, func(ctx context.Context, res string) (int, error) {
			seen = append(seen, fmt.Sprint(res, " ", ctx.Value(ctxKey{})))
			time.Sleep(20 * time.Millisecond) // a second request, say
			if res == "bad" {
				return 0, errFailed
			}
			return len(res), nil
		})
		ctx := context.WithValue(t.Context(), ctxKey{}, "v")
		start := time.Now()

		wait := towertest.GoRequest(ctx, svc, "a").Wait
		h.ExpectNow(t, "a").Respond("hello")
		if res, err := wait(); res != 5 || err != nil {
			t.Errorf("success: got %d, %v; want 5, nil", res, err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("success answered at %v, want 20ms (f's work counted)", d)
		}

		wait = towertest.GoRequest(ctx, svc, "b").Wait
		h.ExpectNow(t, "b").Respond("bad")
		if res, err := wait(); res != 0 || err != errFailed {
			t.Errorf("f fails: got %d, %v; want 0, %v", res, err, errFailed)
		}

		wait = towertest.GoRequest(ctx, svc, "c").Wait
		h.ExpectNow(t, "c").Fail(errFailed)
		if res, err := wait(); res != 0 || err != errFailed {
			t.Errorf("call fails: got %d, %v; want 0, %v", res, err, errFailed)
		}

		broken := errors.New("broken")
		h.FailReady(broken)
		if _, err := svc.Ready(t.Context()); err != broken {
			t.Errorf("Ready: got %v, want %v unchanged", err, broken)
		}
		if want := []string{"hello v", "bad v"}; fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("f saw %q, want %q", seen, want)
		}
	})
}

// f sees every outcome with the call's ctx, here to fall back on another
// service when the call failed; a Ready error does not reach f.
func TestThen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		primary, h := towertest.NewMock[string, string]()
		fallback := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
			return fmt.Sprint("fallback ", ctx.Value(ctxKey{})), nil
		})
		calls := 0
		svc := tower.Then(primary, func(ctx context.Context, res string, err error) (string, error) {
			calls++
			if err != nil {
				return tower.Call(ctx, fallback, "again")
			}
			return res, nil
		})
		ctx := context.WithValue(t.Context(), ctxKey{}, "v")

		wait := towertest.GoRequest(ctx, svc, "a").Wait
		h.ExpectNow(t, "a").Respond("primary")
		if res, err := wait(); res != "primary" || err != nil {
			t.Errorf("success: got %q, %v; want %q, nil", res, err, "primary")
		}

		wait = towertest.GoRequest(ctx, svc, "b").Wait
		h.ExpectNow(t, "b").Fail(errFailed)
		if res, err := wait(); res != "fallback v" || err != nil {
			t.Errorf("failure: got %q, %v; want %q, nil", res, err, "fallback v")
		}

		broken := errors.New("broken")
		h.FailReady(broken)
		if _, err := svc.Ready(t.Context()); err != broken {
			t.Errorf("Ready: got %v, want %v unchanged", err, broken)
		}
		if calls != 2 {
			t.Errorf("f ran %d times, want 2", calls)
		}
	})
}

// The inner service's reservation ends when its call returns, before f
// runs: over a ConcurrencyLimit(1), f finds the limit free again, so a slow
// f does not hold the inner service's capacity.
func TestThenRunsAfterInnerReservationEnds(t *testing.T) {
	inner := limit.NewConcurrency[int, int](echoInt, 1)
	check := func(ctx context.Context, res int, err error) (int, error) {
		p, ok, _ := tower.ReadyNow[int, int](inner)
		p.Release()
		if !ok {
			return 0, errors.New("the limit's permit is still held while f runs")
		}
		return res, err
	}
	services := map[string]tower.Service[int, int]{
		"AndThen": tower.AndThen(inner, func(ctx context.Context, res int) (int, error) { return check(ctx, res, nil) }),
		"Then":    tower.Then(inner, check),
	}
	for name, svc := range services {
		t.Run(name, func(t *testing.T) {
			if res, err := tower.Call(t.Context(), svc, 7); res != 7 || err != nil {
				t.Errorf("got %d, %v; want 7, nil", res, err)
			}
		})
	}
}

func TestThenConformance(t *testing.T) {
	layers := map[string]func() tower.Layer[string, string]{
		"AndThenLayer": func() tower.Layer[string, string] {
			return tower.AndThenLayer[string](func(_ context.Context, r string) (string, error) { return r, nil })
		},
		"ThenLayer": func() tower.Layer[string, string] {
			return tower.ThenLayer[string](func(_ context.Context, r string, err error) (string, error) { return r, err })
		},
	}
	for name, newLayer := range layers {
		t.Run(name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: newLayer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}
