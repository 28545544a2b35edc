package towerredis_test

import (
	"context"
	"github.com/towergo/tower/towerredis"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/redistest"
)

// Redis unreachable, at a closed port (refused at once) and at a black
// hole (a listener that never answers): each fail mode answers after one
// round trip, within its timeout, probe or not. FailOpen admits; FailClosed
// returns a permit whose Call fails with an *UnreachableError without
// reaching the inner service, and whose Release makes no round trip. The
// observer sees every failed round trip.
func TestBucketUnreachable(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, where := range []struct {
		name string
		addr func(testing.TB) string
		took time.Duration // what one round trip takes
	}{
		{"ClosedPort", closedPort, 0},
		{"BlackHole", blackHole, timeout},
	} {
		t.Run(where.name, func(t *testing.T) {
			t.Parallel()
			addr := where.addr(t)
			t.Run("FailOpen", func(t *testing.T) {
				r, inner, rt := newTestBucket(t, addr, "down", 1, time.Second, 1, towerredis.WithTimeout(timeout))
				for i, ctx := range []context.Context{t.Context(), doneCtx()} {
					start := time.Now()
					p, err := r.Ready(ctx)
					if err != nil {
						t.Fatalf("Ready %d: %v, want admitted: the limit fails open", i, err)
					}
					within(t, "Ready failing open", time.Since(start), where.took, where.took+slack)
					p.Release() // no token to give back: no round trip
				}
				if n, e := rt.N.Load(), rt.Errs.Load(); n != 2 || e != 2 {
					t.Errorf("the observer saw %d round trips, %d failed; want 2, 2", n, e)
				}
				if n := inner.Outstanding.Load(); n != 0 {
					t.Errorf("inner service has %d permits outstanding, want 0", n)
				}
			})
			t.Run("FailClosed", func(t *testing.T) {
				r, inner, rt := newTestBucket(t, addr, "down", 1, time.Second, 1, towerredis.WithTimeout(timeout), towerredis.WithFailMode(towerredis.FailClosed))
				for i, ctx := range []context.Context{t.Context(), doneCtx(), t.Context()} {
					start := time.Now()
					p, err := r.Ready(ctx)
					if err != nil {
						t.Fatalf("Ready %d: %v, want a permit that refuses", i, err)
					}
					within(t, "Ready failing closed", time.Since(start), where.took, where.took+slack)
					if i < 2 {
						refused(t, p, "down")
					} else {
						p.Release() // nothing to give back: no round trip
					}
				}
				if n, e := rt.N.Load(), rt.Errs.Load(); n != 3 || e != 3 {
					t.Errorf("the observer saw %d round trips, %d failed; want 3, 3", n, e)
				}
				if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 0 || o != 0 {
					t.Errorf("the inner service got %d calls, %d permits outstanding; want 0, 0", n, o)
				}
			})
		})
	}
}

// Redis killed mid-run and started again, empty: during the outage each
// fail mode does what it says, and afterwards the limit works again, on a
// fresh bucket, with the script loaded again without anyone's help.
func TestBucketRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	open, _, ort := newTestBucket(t, srv.Addr(), "restart", 1, 10*time.Second, 1, towerredis.WithTimeout(100*time.Millisecond))
	closed, _, _ := newTestBucket(t, srv.Addr(), "restart", 1, 10*time.Second, 1,
		towerredis.WithTimeout(100*time.Millisecond), towerredis.WithFailMode(towerredis.FailClosed))
	p := mustReady(t, t.Context(), open)
	p.Release()
	p = mustReady(t, t.Context(), closed)
	p.Call(t.Context(), "x")
	if _, ok, _ := tower.ReadyNow[string, string](open); ok {
		t.Fatal("ReadyNow granted a second token of a burst of 1")
	}

	srv.Kill()
	if _, ok, err := tower.ReadyNow[string, string](open); !ok || err != nil {
		t.Errorf("FailOpen during the outage: ReadyNow = %v, %v; want admitted", ok, err)
	}
	if ort.LastErr() == nil {
		t.Error("the observer saw no error during the outage")
	}
	if p, ok, err := tower.ReadyNow[string, string](closed); !ok || err != nil {
		t.Errorf("FailClosed during the outage: ReadyNow = %v, %v; want a permit that refuses", ok, err)
	} else {
		refused(t, p, "restart")
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The connections broken by the kill may fail a round trip or two
	// before the pools dial again: ask until one answers, for at most 5s.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if p, ok, err := tower.ReadyNow[string, string](closed); err != nil {
			t.Fatal(err)
		} else if ok && !towerredis.IsRefusal(&p) {
			break // the restarted Redis is empty: a fresh bucket, whose token this is
		} else if ok {
			p.Release()
		}
		if time.Now().After(deadline) {
			t.Fatal("FailClosed limit not ready 5s after Redis came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		errs := ort.Errs.Load()
		_, ok, err := tower.ReadyNow[string, string](open)
		if err != nil {
			t.Fatal(err)
		}
		if ort.Errs.Load() == errs {
			if ok {
				t.Error("FailOpen limit after the restart: Redis answered with a second token of a burst of 1")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("FailOpen limit still failing open 5s after Redis came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With WithBatch, the callers of a replica waiting for the round trip of
// another caller share its outcome: Redis at a black hole, ten callers at
// once are all answered after one timeout, not one timeout after another:
// failing open, admitted; failing closed, each with a permit that refuses.
func TestBucketBatchUnreachable(t *testing.T) {
	const timeout = 100 * time.Millisecond
	addr := blackHole(t)
	for _, mode := range []towerredis.FailMode{towerredis.FailOpen, towerredis.FailClosed} {
		t.Run(mode.String(), func(t *testing.T) {
			r, inner, _ := newTestBucket(t, addr, "down", 1, time.Second, 5, towerredis.WithBatch(5), towerredis.WithTimeout(timeout), towerredis.WithFailMode(mode))
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			type answer struct {
				p   tower.Permit[string, string]
				err error
			}
			answers := make(chan answer, 10)
			start := time.Now()
			for range 10 {
				go func() {
					p, err := r.Ready(ctx)
					answers <- answer{p, err}
				}()
			}
			for range 10 {
				a := <-answers
				if a.err != nil {
					t.Errorf("Ready: %v, want a permit", a.err)
					continue
				}
				if mode == towerredis.FailClosed {
					refused(t, a.p, "down")
				} else if towerredis.IsRefusal(&a.p) {
					t.Error("FailOpen handed out a permit that refuses")
				}
				a.p.Release()
			}
			within(t, "ten callers", time.Since(start), timeout, timeout+slack)
			if o := inner.Outstanding.Load(); o != 0 {
				t.Errorf("the inner service has %d permits outstanding, want 0", o)
			}
		})
	}
}
