package loadshed_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towertest"
)

// With patience, a caller that finds the limit full waits for a permit up
// to the patience: freed within 20ms, the request is served then; not, it
// is shed at exactly 20ms, having reserved nothing.
func TestPatience(t *testing.T) {
	for _, c := range []struct {
		name    string
		release time.Duration
		want    error
		after   time.Duration
	}{
		{"FreedWithin", 10 * time.Millisecond, nil, 10 * time.Millisecond},
		{"FreedJustWithin", 20*time.Millisecond - 1, nil, 20*time.Millisecond - 1},
		{"FreedJustAfter", 20*time.Millisecond + 1, loadshed.ErrOverloaded, 20 * time.Millisecond},
		{"NeverFreed", time.Hour, loadshed.ErrOverloaded, 20 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := limit.NewConcurrency[string, string](echoString, 1)
				svc := loadshed.New[string, string](lim, loadshed.WithPatience(20*time.Millisecond))
				held := towertest.MustReady(t, lim)
				start := time.Now()
				time.AfterFunc(c.release, held.Release)
				r := towertest.GoRequest(t.Context(), tower.Service[string, string](svc), "x")
				if _, err := r.Wait(); err != c.want {
					t.Errorf("got %v, want %v", err, c.want)
				}
				if r.Elapsed() != c.after {
					t.Errorf("answered after %v, want %v", r.Elapsed(), c.after)
				}
				if c.release < time.Hour {
					time.Sleep(time.Until(start.Add(c.release))) // the held permit is back
					synctest.Wait()
					if p, ok := towertest.ReadyNow(t, lim); !ok {
						t.Error("the limit has no permit left after the request: something kept one")
					} else {
						p.Release()
					}
				}
			})
		})
	}
}

// A done ctx (a "ready now?" probe) is shed at once, patience or not; a
// caller whose ctx ends while it waits gets ctx's error; a broken inner
// service's error goes up.
func TestPatienceEdges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := limit.NewConcurrency[string, string](echoString, 1)
		svc := loadshed.New[string, string](lim, loadshed.WithPatience(time.Second))
		held := towertest.MustReady(t, lim)
		defer held.Release()
		start := time.Now()
		if p, ok, err := tower.ReadyNow[string, string](svc); !ok || err != nil {
			t.Fatalf("probe: %v, %v; want a permit that sheds", ok, err)
		} else if _, err := p.Call(t.Context(), "x"); err != loadshed.ErrOverloaded || time.Since(start) != 0 {
			t.Errorf("probe's call: %v after %v, want %v at once", err, time.Since(start), loadshed.ErrOverloaded)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		defer cancel()
		r := towertest.GoReady(ctx, svc)
		r.ExpectError(t, context.DeadlineExceeded)
		r.ExpectElapsed(t, 5*time.Millisecond)
	})
	synctest.Test(t, func(t *testing.T) {
		broken := errors.New("broken")
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		svc := loadshed.New[string, string](m, loadshed.WithPatience(time.Second))
		r := towertest.GoReady(t.Context(), svc)
		synctest.Wait()
		h.FailReady(broken)
		r.ExpectError(t, broken)
	})
}

// The conformance suite, with patience.
func TestPatienceConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] {
			return loadshed.NewLayer[string, string](loadshed.WithPatience(10 * time.Millisecond))
		},
		Request: "hello", Response: "world",
	}.Run(t)
}

func TestPatienceBadInput(t *testing.T) {
	defer func() {
		if r := recover(); r != "loadshed.WithPatience: d must not be negative, got -1ns" {
			t.Errorf("panicked with %v", r)
		}
	}()
	loadshed.WithPatience(-1)
}
