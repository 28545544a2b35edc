package readycache_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/towertest"
)

var errDoom = errors.New("doom")

// tower: poll_ready_inner_failure. An endpoint whose Ready fails is removed
// and reported with its key; the other one stays. Here the failure is seen
// as it is pushed, when the cache asks it whether it is ready.
func TestInnerFailureReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m0, h0 := newMock(-1)
		h0.FailReady(errDoom)
		c.Push(0, m0)
		m1, _ := newMock(1)
		c.Push(1, m1)
		checkLens(t, c, 1, 0)
		f.check(t, "0: doom")
		if c.Contains(0) || !c.IsReady(1) {
			t.Errorf("got Contains(0) %t, IsReady(1) %t; want false, true", c.Contains(0), c.IsReady(1))
		}
	})
}

// The same failure seen by the goroutine waiting for a pending endpoint.
func TestPendingFailureReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m, h := newMock(0)
		c.Push(7, m)
		checkLens(t, c, 0, 1)
		time.Sleep(30 * time.Millisecond)
		h.FailReady(errDoom)
		checkLens(t, c, 0, 0)
		f.check(t, "7: doom")
	})
}

// tower: poll_ready_not_ready. Two endpoints that are not ready are both
// pending.
func TestNotReadyIsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m0, _ := newMock(0)
		m1, _ := newMock(0)
		c.Push(0, m0)
		c.Push(1, m1)
		checkLens(t, c, 0, 2)
		f.check(t)
	})
}

// tower: poll_ready_promotes_inner. Pending endpoints become ready when
// their Ready returns, in the background: nobody polls the cache.
func TestPendingPromoted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m0, h0 := newMock(0)
		m1, h1 := newMock(0)
		c.Push(0, m0)
		c.Push(1, m1)
		checkLens(t, c, 0, 2)
		h0.Allow(1)
		h1.Allow(1)
		checkLens(t, c, 2, 0)
		h0.ExpectOutstanding(t, 1) // each holds its reservation
		h1.ExpectOutstanding(t, 1)
	})
}

// An endpoint that is ready when pushed is ready at once, without a
// goroutine, and endpoints pushed ready keep their push order.
func TestReadyAtPush(t *testing.T) {
	c, _ := newCache(t)
	ms := make([]*mock, 3)
	for i := range ms {
		ms[i], _ = newMock(-1)
		c.Push(i, ms[i])
	}
	for i := range ms {
		k, p, ok := c.TryTake(pickAt(i))
		if !ok || k != i {
			t.Fatalf("TryTake(pickAt(%d)): got key %d, %t; want %d, true", i, k, ok, i)
		}
		p.Release()
	}
	if got := c.ReadyLen(); got != 3 {
		t.Errorf("got ReadyLen() = %d, want 3: always-ready endpoints stay ready", got)
	}
}

// tower: evict_ready_then_error. An evicted ready endpoint gives its
// reservation back, and its later failure is never reported.
func TestEvictReadyThenError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m, h := newMock(0)
		c.Push(0, m)
		checkLens(t, c, 0, 1)
		h.Allow(1)
		checkLens(t, c, 1, 0)
		h.FailReady(errDoom)
		if !c.Evict(0) {
			t.Fatal("Evict(0): got false, want true")
		}
		checkLens(t, c, 0, 0)
		h.ExpectOutstanding(t, 0)
		f.check(t)
	})
}

// tower: evict_pending_then_error and push_then_evict. Evicting a pending
// endpoint ends the wait for it: its goroutine's Ready returns its
// context's error, which is not a failure, and a failure after that is
// never seen. tower marks the endpoint cancelled and drops it at the next
// poll; here the goroutine waiting in its Ready is woken at once (synctest
// would fail the test if it were left behind).
func TestEvictPendingThenError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m, h := newMock(0)
		c.Push(0, m)
		checkLens(t, c, 0, 1)
		if !c.Evict(0) {
			t.Fatal("Evict(0): got false, want true")
		}
		h.FailReady(errDoom)
		checkLens(t, c, 0, 0)
		f.check(t)
		if c.Evict(0) {
			t.Error("second Evict(0): got true, want false")
		}
		// The error is still there for whoever asks next: nobody did.
		if _, err := m.Ready(t.Context()); err != errDoom {
			t.Errorf("mock's next Ready: got %v, want %v", err, errDoom)
		}
	})
}

// tower: error_after_promote. A ready endpoint is not watched: a failure
// after it became ready is not seen while it holds its reservation. It is
// seen at the endpoint's next Ready, once its permit has been taken; the
// permit taken was granted before and still works.
func TestErrorAfterPromote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m, h := newMock(0)
		c.Push(0, m)
		h.Allow(1)
		checkLens(t, c, 1, 0)
		h.FailReady(errDoom)
		checkLens(t, c, 1, 0)
		f.check(t)

		p, ok := c.TakeKey(0)
		if !ok {
			t.Fatal("TakeKey(0): got false, want the permit")
		}
		checkLens(t, c, 0, 0)
		f.check(t, "0: doom")
		towertest.CallThrough(t, p, h, "hello", "world")
	})
}

// tower: duplicate_key_by_index. Pushing a key again replaces its endpoint,
// whose reservation is released at once; Evict removes the new one; a key
// pushed after that is ready and callable.
func TestDuplicateKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		m0, h0 := newMock(1)
		c.Push(0, m0)
		h0.ExpectOutstanding(t, 1)
		m1, h1 := newMock(1)
		c.Push(0, m1) // replaces m0
		h0.ExpectOutstanding(t, 0)
		h1.ExpectOutstanding(t, 1)
		checkLens(t, c, 1, 0)

		c.Evict(0) // evicts m1
		h1.ExpectOutstanding(t, 0)
		checkLens(t, c, 0, 0)
		if c.IsReady(0) {
			t.Error("IsReady(0) after Evict: got true, want false")
		}
		if _, ok := c.TakeKey(0); ok {
			t.Error("TakeKey(0) after Evict: got a permit, want none")
		}

		m2, h2 := newMock(1)
		c.Push(0, m2)
		checkLens(t, c, 1, 0)
		p, ok := c.TakeKey(0)
		if !ok {
			t.Fatal("TakeKey(0): got false, want m2's permit")
		}
		towertest.CallThrough(t, p, h2, "hello", "world")
		for i, h := range []*handle{h0, h1} {
			if n := h.Calls(); n != 0 {
				t.Errorf("replaced mock %d got %d calls, want 0", i, n)
			}
		}
		f.check(t)
	})
}

// Replacing a pending endpoint ends the wait for the old one.
func TestReplacePending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m0, h0 := newMock(0)
		c.Push(0, m0)
		checkLens(t, c, 0, 1)
		m1, h1 := newMock(0)
		c.Push(0, m1)
		checkLens(t, c, 0, 1)
		h0.Allow(1) // too late: nobody waits for m0
		checkLens(t, c, 0, 1)
		h0.ExpectOutstanding(t, 0)
		h1.Allow(1)
		checkLens(t, c, 1, 0)
		h1.ExpectOutstanding(t, 1)
	})
}

// tower: cancelation_observed (#415). 130 endpoints pushed under one key,
// each replacing the one before: every replaced one is dropped at once
// (its reservation released, or the goroutine waiting for it ended), and
// the cache settles with the last one. Run with endpoints ready at once
// (tower's allow(1)) and with pending ones.
func TestCancellationObserved(t *testing.T) {
	for _, tt := range []struct {
		name  string
		allow int
	}{{"Ready", 1}, {"Pending", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, f := newCache(t)
				var handles []*handle
				for range 130 {
					m, h := newMock(tt.allow)
					c.Push(0, m)
					handles = append(handles, h)
				}
				checkLens(t, c, tt.allow, 1-tt.allow)
				for i, h := range handles[:129] {
					if n := h.Outstanding(); n != 0 {
						t.Fatalf("replaced mock %d has %d reservations outstanding, want 0", i, n)
					}
				}
				last := handles[129]
				last.Allow(1)
				checkLens(t, c, 1, 0)
				last.ExpectOutstanding(t, 1)
				f.check(t)
			})
		})
	}
}

// After its permit is taken, an endpoint with capacity left is ready again
// in place; one without goes pending until its capacity comes back.
func TestTakeRefills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m0, h0 := newMock(-1)
		m1, h1 := newMock(1)
		m2, _ := newMock(-1)
		c.Push(0, m0)
		c.Push(1, m1)
		c.Push(2, m2)

		k, p, ok := c.TryTake(pickAt(1))
		if !ok || k != 1 {
			t.Fatalf("TryTake: got key %d, %t; want 1, true", k, ok)
		}
		checkLens(t, c, 2, 1)
		// m1's place went to the last ready endpoint, as tower's swap_remove.
		if k, q, _ := c.TryTake(pickAt(1)); k != 2 {
			t.Errorf("TryTake(pickAt(1)) after 1 left: got key %d, want 2", k)
		} else {
			q.Release()
		}
		p.Release() // m1's capacity comes back: it is ready again
		checkLens(t, c, 3, 0)
		h1.ExpectOutstanding(t, 1)

		k, p, _ = c.TryTake(pickAt(0))
		if k != 0 {
			t.Fatalf("TryTake(pickAt(0)): got key %d, want 0", k)
		}
		checkLens(t, c, 3, 0)
		h0.ExpectOutstanding(t, 2) // the caller's and the cache's
		towertest.CallThrough(t, p, h0, "hello", "world")
		h0.ExpectOutstanding(t, 1)
	})
}
