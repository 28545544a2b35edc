package towerredis

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/redistest"
)

// Redis unreachable, at a closed port (refused at once) and at a black
// hole (a listener that never answers): each fail mode answers within its
// timeout. FailOpen admits, after the timeout at most; FailClosed's probe
// gets ctx.Err() after one round trip, and a caller that waits asks again
// every retry interval and gets ctx.Err() at its deadline (and at most a
// round trip's timeout after it, since a round trip in flight is not cut
// off). The observer sees every failed round trip.
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
				r, inner, rt := newTestBucket(t, addr, "down", 1, time.Second, 1, WithTimeout(timeout))
				for i, ctx := range []context.Context{t.Context(), doneCtx()} {
					start := time.Now()
					p, err := r.Ready(ctx)
					if err != nil {
						t.Fatalf("Ready %d: %v, want admitted: the limit fails open", i, err)
					}
					within(t, "Ready failing open", time.Since(start), where.took, where.took+slack)
					p.Release() // no token to give back: no round trip
				}
				if n, e := rt.n.Load(), rt.errs.Load(); n != 2 || e != 2 {
					t.Errorf("the observer saw %d round trips, %d failed; want 2, 2", n, e)
				}
				if n := inner.outstanding.Load(); n != 0 {
					t.Errorf("inner service has %d permits outstanding, want 0", n)
				}
			})
			t.Run("FailClosed", func(t *testing.T) {
				r, _, rt := newTestBucket(t, addr, "down", 1, time.Second, 1,
					WithTimeout(timeout), WithFailMode(FailClosed), WithRetryInterval(50*time.Millisecond))
				start := time.Now()
				if _, ok, err := tower.ReadyNow[string, string](r); ok || err != nil {
					t.Fatalf("probe: ReadyNow = %v, %v; want not ready: the limit fails closed", ok, err)
				}
				within(t, "the probe", time.Since(start), where.took, where.took+slack)
				if n := rt.n.Load(); n != 1 {
					t.Errorf("the probe made %d round trips, want 1", n)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
				defer cancel()
				start = time.Now()
				if _, err := r.Ready(ctx); err != context.DeadlineExceeded {
					t.Fatalf("Ready: %v, want %v at the deadline", err, context.DeadlineExceeded)
				}
				within(t, "a waiting caller", time.Since(start), 300*time.Millisecond, 300*time.Millisecond+timeout+slack)
				if n := rt.n.Load(); n < 3 {
					t.Errorf("%d round trips in all, want at least 3: the caller asks again every retry interval", n)
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
	open, _, ort := newTestBucket(t, srv.Addr(), "restart", 1, 10*time.Second, 1, WithTimeout(100*time.Millisecond))
	closed, _, _ := newTestBucket(t, srv.Addr(), "restart", 1, 10*time.Second, 1,
		WithTimeout(100*time.Millisecond), WithFailMode(FailClosed))
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
	if ort.lastErr() == nil {
		t.Error("the observer saw no error during the outage")
	}
	if _, ok, err := tower.ReadyNow[string, string](closed); ok || err != nil {
		t.Errorf("FailClosed during the outage: ReadyNow = %v, %v; want not ready", ok, err)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The connections broken by the kill may fail a round trip or two
	// before the pools dial again: ask until one answers, for at most 5s.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok, err := tower.ReadyNow[string, string](closed); err != nil {
			t.Fatal(err)
		} else if ok {
			break // the restarted Redis is empty: a fresh bucket, whose token this is
		}
		if time.Now().After(deadline) {
			t.Fatal("FailClosed limit not ready 5s after Redis came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		errs := ort.errs.Load()
		_, ok, err := tower.ReadyNow[string, string](open)
		if err != nil {
			t.Fatal(err)
		}
		if ort.errs.Load() == errs {
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
// another caller share its outcome: Redis at a black hole, failing open,
// ten callers at once are all admitted after one timeout, not one timeout
// after another. Failing closed, they get ctx.Err() at their deadline.
func TestBucketBatchUnreachable(t *testing.T) {
	const timeout = 100 * time.Millisecond
	addr := blackHole(t)
	for _, mode := range []FailMode{FailOpen, FailClosed} {
		t.Run(mode.String(), func(t *testing.T) {
			r, _, _ := newTestBucket(t, addr, "down", 1, time.Second, 5, WithBatch(5), WithTimeout(timeout), WithFailMode(mode))
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			errs := make(chan error, 10)
			start := time.Now()
			for range 10 {
				go func() {
					p, err := r.Ready(ctx)
					if err == nil {
						p.Release()
					}
					errs <- err
				}()
			}
			for range 10 {
				err := <-errs
				if mode == FailOpen && err != nil {
					t.Errorf("Ready: %v, want admitted", err)
				}
				if mode == FailClosed && err != context.DeadlineExceeded {
					t.Errorf("Ready: %v, want %v", err, context.DeadlineExceeded)
				}
			}
			if mode == FailOpen {
				within(t, "ten callers failing open", time.Since(start), timeout, timeout+slack)
			} else {
				within(t, "ten callers failing closed", time.Since(start), 300*time.Millisecond, 300*time.Millisecond+timeout+slack)
			}
		})
	}
}
