package sema

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/towertest"
)

// acquirer is an Acquire running on its own goroutine.
type acquirer struct{ *towertest.Outcome[struct{}] }

// goAcquire starts s.Acquire(ctx) and waits until it has either returned
// or parked, so that acquirers started one after another queue in order.
// It must run inside a synctest bubble.
func goAcquire(ctx context.Context, s *Sema) *acquirer {
	return startAcquire(func() error { return s.Acquire(ctx) })
}

// startAcquire runs acquire on its own goroutine, as goAcquire does.
func startAcquire(acquire func() error) *acquirer {
	a := &acquirer{towertest.Go(func() (struct{}, error) { return struct{}{}, acquire() })}
	synctest.Wait()
	return a
}

// result waits for the Acquire to return and returns its error.
func (a *acquirer) result() error {
	_, err := a.Wait()
	return err
}

func checkCounts(t *testing.T, s *Sema, avail, waiting int) {
	t.Helper()
	if got := s.Available(); got != avail {
		t.Errorf("got Available() = %d, want %d", got, avail)
	}
	if got := s.Waiting(); got != waiting {
		t.Errorf("got Waiting() = %d, want %d", got, waiting)
	}
}

func TestNewPanicsOnBadN(t *testing.T) {
	for _, n := range []int{-1, MaxUnits + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			want := fmt.Sprintf("sema.New: n must be between 0 and %d, got %d", MaxUnits, n)
			towertest.Panics(t, want, func() { New(n) })
		})
	}
}

func TestTryAcquireReleaseCounts(t *testing.T) {
	s := New(2)
	checkCounts(t, s, 2, 0)
	for i, want := range []bool{true, true, false} {
		if got := s.TryAcquire(); got != want {
			t.Fatalf("TryAcquire %d: got %t, want %t", i, got, want)
		}
	}
	checkCounts(t, s, 0, 0)
	s.Release()
	checkCounts(t, s, 1, 0)
	if !s.TryAcquire() {
		t.Fatal("TryAcquire after Release: got false, want true")
	}
	s.Release()
	s.Release()
	checkCounts(t, s, 2, 0)
}

func TestOverReleasePanics(t *testing.T) {
	for _, tt := range []struct {
		name    string
		n, take int
	}{
		{"ZeroSema", 0, 0},
		{"NoneTaken", 1, 0},
		{"AllGivenBack", 3, 2},
		{"OneStripeFull", 2*unitsPerStripe - 1, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.n)
			for range tt.take {
				if !s.TryAcquire() {
					t.Fatal("TryAcquire: got false, want true")
				}
			}
			for range tt.take {
				s.Release()
			}
			towertest.Panics(t, overRelease, s.Release)
			checkCounts(t, s, tt.n, 0)
		})
	}
}

// A Sema with no units can have waiters; a Release then is still one too
// many, and must not hand a unit that never existed to a waiter.
// A striped Sema cannot tell, from one stripe, that units were released
// twice elsewhere; it panics once a stripe alone would hold more than the
// whole Sema. The permits above it are what keep a reservation from being
// given back twice.
func TestStripedOverReleasePanics(t *testing.T) {
	s := New(MaxUnits)
	if len(s.lines) < 2 {
		t.Fatalf("New(MaxUnits) has %d stripes, want several", len(s.lines))
	}
	l := &s.lines[s.hint()&s.mask]
	l.free.Store(MaxUnits) // every unit in the caller's stripe
	towertest.Panics(t, overRelease, s.Release)
	if got := l.free.Load(); got != MaxUnits {
		t.Errorf("the stripe holds %d after the panic, want %d", got, MaxUnits)
	}
}

func TestOverReleaseWithWaiterPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s Sema
		ctx, cancel := context.WithCancel(t.Context())
		a := goAcquire(ctx, &s)
		towertest.Panics(t, overRelease, s.Release)
		synctest.Wait()
		if a.Done() {
			t.Fatal("the waiter was woken by a Release that panicked")
		}
		cancel()
		if err := a.result(); err != context.Canceled {
			t.Fatalf("got %v, want %v", err, context.Canceled)
		}
		checkCounts(t, &s, 0, 0)
	})
}

func TestAcquireFreeUnitWithDoneContext(t *testing.T) {
	s := New(1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Acquire(ctx); err != nil {
		t.Fatalf("got %v, want nil: a free unit is granted even to a done context", err)
	}
	checkCounts(t, s, 0, 0)
	// No unit now: a done context gives up at once, without queueing.
	if err := s.Acquire(ctx); err != context.Canceled {
		t.Fatalf("got %v, want %v", err, context.Canceled)
	}
	checkCounts(t, s, 0, 0)
}

func TestAcquireWaitingReturnsCtxErr(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  func(context.Context) (context.Context, context.CancelFunc)
		wait time.Duration // when the context ends
		want error
	}{
		{"Canceled", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(30*time.Millisecond, cancel)
			return ctx, cancel
		}, 30 * time.Millisecond, context.Canceled},
		{"DeadlineExceeded", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 50*time.Millisecond)
		}, 50 * time.Millisecond, context.DeadlineExceeded},
		{"CauseIsNotReturned", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(ctx)
			time.AfterFunc(10*time.Millisecond, func() { cancel(errors.New("cause")) })
			return ctx, func() { cancel(nil) }
		}, 10 * time.Millisecond, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(1)
				s.TryAcquire()
				ctx, cancel := tt.ctx(t.Context())
				defer cancel()
				start := time.Now()
				a := goAcquire(ctx, s)
				checkCounts(t, s, 0, 1)
				err := a.result()
				if err != tt.want {
					t.Fatalf("got %v, want %v unchanged", err, tt.want)
				}
				if got := time.Since(start); got != tt.wait {
					t.Errorf("gave up after %v, want %v", got, tt.wait)
				}
				checkCounts(t, s, 0, 0)
				// The unit still goes back to the pool, not to a ghost waiter.
				s.Release()
				checkCounts(t, s, 1, 0)
			})
		})
	}
}

func TestFIFOReleaseWakesOnlyTheOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(2)
		s.TryAcquire()
		s.TryAcquire()
		var ws []*acquirer
		for range 4 {
			ws = append(ws, goAcquire(t.Context(), s))
		}
		checkCounts(t, s, 0, 4)
		for i := range ws {
			s.Release()
			synctest.Wait()
			for j, w := range ws {
				if got, want := w.Done(), j <= i; got != want {
					t.Fatalf("after %d releases: waiter %d finished = %t, want %t", i+1, j, got, want)
				}
			}
			if err := ws[i].result(); err != nil {
				t.Fatalf("waiter %d: got %v, want nil", i, err)
			}
			checkCounts(t, s, 0, len(ws)-i-1)
		}
		// The last two waiters hold the two units; the first two gave theirs
		// on (the releases above stand for them).
		s.Release()
		s.Release()
		checkCounts(t, s, 2, 0)
	})
}

// A unit given back while a waiter is queued goes to that waiter, even
// before it has run: a newcomer cannot take it.
func TestNewcomerDoesNotOvertake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		s.TryAcquire()
		a := goAcquire(t.Context(), s)
		s.Release()
		if s.TryAcquire() {
			t.Fatal("TryAcquire took the unit released to a queued waiter")
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := s.Acquire(ctx); err != context.Canceled {
			t.Fatalf("Acquire by a newcomer with a done context: got %v, want %v", err, context.Canceled)
		}
		if err := a.result(); err != nil {
			t.Fatalf("waiter: got %v, want nil", err)
		}
		checkCounts(t, s, 0, 0)
		s.Release()
		checkCounts(t, s, 1, 0)
	})
}

// A newcomer that comes between a release's step on its stripe and its
// hand-off under the lock finds the unit free but a waiter queued: it
// queues behind, and the hand-off gives the unit to the waiter.
func TestNewcomerInReleaseGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		s.TryAcquire()
		a := goAcquire(t.Context(), s)
		s.lines[s.hint()&s.mask].free.Add(1) // Release's first step; its hand-off not yet run
		b := goAcquire(t.Context(), s)
		if a.Done() || b.Done() {
			t.Fatalf("before the hand-off: waiter done %v, newcomer done %v, want both waiting", a.Done(), b.Done())
		}
		s.handOff()
		synctest.Wait()
		if err := a.result(); err != nil {
			t.Fatalf("waiter: got %v, want nil", err)
		}
		if b.Done() {
			t.Fatal("the newcomer got a unit too, beyond the one there is")
		}
		checkCounts(t, s, 0, 1)
		s.Release()
		if err := b.result(); err != nil {
			t.Fatalf("newcomer: got %v, want nil", err)
		}
		s.Release()
		checkCounts(t, s, 1, 0)
	})
}

func TestCancelFromTheMiddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		s.TryAcquire()
		ctx, cancel := context.WithCancel(t.Context())
		first := goAcquire(t.Context(), s)
		middle := goAcquire(ctx, s)
		last := goAcquire(t.Context(), s)
		cancel()
		if err := middle.result(); err != context.Canceled {
			t.Fatalf("cancelled waiter: got %v, want %v", err, context.Canceled)
		}
		checkCounts(t, s, 0, 2)

		s.Release()
		synctest.Wait()
		if !first.Done() || last.Done() {
			t.Fatalf("after one release: got first %t, last %t finished; want true, false", first.Done(), last.Done())
		}
		s.Release()
		if err := last.result(); err != nil {
			t.Fatalf("last waiter: got %v, want nil", err)
		}
		checkCounts(t, s, 0, 0)
		s.Release()
		checkCounts(t, s, 1, 0)
	})
}

// TestGrantStandsOverCancel drives the race by hand: the waiter is granted
// a unit, and only then runs the cancellation path. The grant stands, and
// the unit is neither lost nor counted twice.
func TestGrantStandsOverCancel(t *testing.T) {
	s := New(1)
	s.TryAcquire()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w, err := s.enqueue(ctx)
	if w == nil {
		t.Fatalf("enqueue: got no waiter (err %v), want one", err)
	}
	s.Release()
	if !w.Woken() {
		t.Fatal("Release did not wake the waiter")
	}
	if s.withdraw(w) {
		t.Fatal("withdraw after a grant: got true, want false (the grant stands)")
	}
	checkCounts(t, s, 0, 0)
	s.Release()
	checkCounts(t, s, 1, 0)
}

// TestGrantRacingCancel lets the scheduler pick: the unit is released and
// the context cancelled before the waiter runs, so its select sees both.
// Whichever it picks, it holds the unit.
func TestGrantRacingCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		for i := range 50 {
			s.TryAcquire()
			ctx, cancel := context.WithCancel(t.Context())
			a := goAcquire(ctx, s)
			s.Release()
			cancel()
			if err := a.result(); err != nil {
				t.Fatalf("round %d: got %v, want nil: the unit was granted before the cancel", i, err)
			}
			checkCounts(t, s, 0, 0)
			s.Release()
			checkCounts(t, s, 1, 0)
		}
	})
}

func TestCloseWakesWaitersAndFailsLaterAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errClosed := errors.New("closed")
		s := New(2)
		s.TryAcquire()
		s.TryAcquire()
		a := goAcquire(t.Context(), s)
		b := goAcquire(t.Context(), s)
		s.Close(errClosed)
		for i, w := range []*acquirer{a, b} {
			if err := w.result(); err != errClosed {
				t.Errorf("waiter %d: got %v, want %v", i, err, errClosed)
			}
		}
		checkCounts(t, s, 0, 0)

		// Units held before Close can still be given back...
		s.Release()
		checkCounts(t, s, 1, 0)
		// ...but nobody gets one, not even with a unit free.
		if s.TryAcquire() {
			t.Error("TryAcquire after Close: got true, want false")
		}
		if err := s.Acquire(t.Context()); err != errClosed {
			t.Errorf("Acquire after Close: got %v, want %v", err, errClosed)
		}
		// Idempotent: the first error stays.
		s.Close(errors.New("again"))
		if err := s.Acquire(t.Context()); err != errClosed {
			t.Errorf("Acquire after a second Close: got %v, want %v", err, errClosed)
		}
		s.Release()
		checkCounts(t, s, 2, 0)
		towertest.Panics(t, overRelease, s.Release)
	})
}

func TestCloseNilPanics(t *testing.T) {
	towertest.Panics(t, "sema.Close: err is nil", func() { New(1).Close(nil) })
}
