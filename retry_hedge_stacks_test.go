package tower_test

// Retry and Hedge in stacks, one test per stack, named by the stack from
// the outside in. Helpers here start with "rh", to keep clear of the other
// test files of this package.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// rhTake returns the next request the mock received, which must be want,
// be there already, and have arrived at since start.
func rhTake(t *testing.T, h *towertest.Handle[string, string], want string, start time.Time, at time.Duration) *towertest.Request[string, string] {
	t.Helper()
	r := h.ExpectSettled(t, want)
	if got := time.Since(start); got != at {
		t.Errorf("request %q arrived at %v, want %v", want, got, at)
	}
	return r
}

// rhCounter counts the attempts that pass through it, and when each came,
// since start.
type rhCounter struct {
	inner tower.Service[string, string]
	start time.Time
	wraps tower.WrapPool[string, string]
	mu    sync.Mutex
	at    []time.Duration
}

func (c *rhCounter) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	p, err := c.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return c.wraps.Wrap((*rhCounterWrapper)(c), p), nil
}

type rhCounterWrapper rhCounter

func (w *rhCounterWrapper) CallWrapped(ctx context.Context, inner tower.Permit[string, string], req string) (string, error) {
	w.mu.Lock()
	w.at = append(w.at, time.Since(w.start))
	w.mu.Unlock()
	return inner.Call(ctx, req)
}

func (w *rhCounterWrapper) ReleaseWrapped(inner tower.Permit[string, string]) { inner.Release() }

// take returns the attempts counted since the last take.
func (c *rhCounter) take() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.at
	c.at = nil
	return at
}

func rhSame(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Retry > Timeout(100ms) > ConcurrencyLimit(1): each attempt is timed
// alone, from its own call, and the wait for the limit's permit between
// attempts is not timed. A retries timeouts, up to 3 attempts:
//
//	  0ms  A's attempt 1 takes the permit
//	 50ms  B waits for the permit
//	100ms  A's attempt 1 times out; B gets the permit; A's attempt 2 waits
//	130ms  B answers; A's attempt 2 gets the permit, and its clock starts
//	230ms  A's attempt 2 times out; attempt 3 starts
//	320ms  attempt 3 answers, 90ms into its own 100ms: A succeeds
func TestStackRetryTimeoutConcurrencyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		timedOut := func(_ string, err error) bool { return errors.Is(err, timeout.ErrElapsed) }
		svc := stack.New[string, string]().
			Layer(retry.NewLayer(retry.NewPolicy[string, string](timedOut))).
			Layer(timeout.NewLayer[string, string](100 * time.Millisecond)).
			Layer(limit.NewConcurrencyLayer[string, string](1)).
			Service(mock)
		start := time.Now()

		a := towertest.GoRequest(t.Context(), svc, "a")
		a1 := rhTake(t, h, "a", start, 0)
		time.Sleep(50 * time.Millisecond)
		b := towertest.GoRequest(t.Context(), svc, "b")
		time.Sleep(50 * time.Millisecond)
		rb := rhTake(t, h, "b", start, 100*time.Millisecond)
		if err := a1.Context().Err(); err != context.DeadlineExceeded || context.Cause(a1.Context()) != timeout.ErrElapsed {
			t.Errorf("attempt 1's context: got %v (cause %v), want %v (cause %v)", err, context.Cause(a1.Context()), context.DeadlineExceeded, timeout.ErrElapsed)
		}
		time.Sleep(30 * time.Millisecond)
		rb.Respond("b ok")
		a2 := rhTake(t, h, "a", start, 130*time.Millisecond)
		time.Sleep(99 * time.Millisecond)
		if err := a2.Context().Err(); err != nil {
			t.Errorf("attempt 2's context at 229ms: got %v, want it live: its clock started at 130ms", err)
		}
		time.Sleep(time.Millisecond)
		a3 := rhTake(t, h, "a", start, 230*time.Millisecond)
		time.Sleep(90 * time.Millisecond)
		a3.Respond("a ok")
		if res, err := a.Wait(); err != nil || res != "a ok" || a.Since(start) != 320*time.Millisecond {
			t.Errorf("A: got %q, %v at %v; want %q, nil at 320ms", res, err, a.Since(start), "a ok")
		}
		if res, err := b.Wait(); err != nil || res != "b ok" || b.Since(start) != 130*time.Millisecond {
			t.Errorf("B: got %q, %v at %v; want %q, nil at 130ms", res, err, b.Since(start), "b ok")
		}
		if n := h.Calls(); n != 4 {
			t.Errorf("inner service got %d calls, want 4", n)
		}
	})
}

// Timeout(250ms) > Retry: one clock covers every attempt and every
// backoff. When it runs out, the attempt in flight is cancelled or the
// backoff cut short, no attempt starts after it, and the caller gets
// ErrElapsed at 250ms. A StandardPolicy whose backoff would reach the
// deadline gives up at once, with the last error.
func TestStackTimeoutRetry(t *testing.T) {
	failed := errors.New("failed")
	wait50 := retry.PolicyFunc[string, string](func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
		return 50 * time.Millisecond, a.Err != nil
	})
	backoff50 := retry.NewExponentialBackoff(50*time.Millisecond, 50*time.Millisecond, 0)
	tests := []struct {
		name     string
		policy   retry.Policy[string, string]
		answers  []time.Duration // when each attempt fails, from its start; 0: never answered
		attempts []time.Duration // when each attempt starts
		wantErr  error
		at       time.Duration
	}{
		// 0: attempt 1, fails at 100; 150: attempt 2, fails at 200; the
		// backoff to 250 is cut short.
		{"DuringBackoff", wait50, []time.Duration{100 * time.Millisecond, 50 * time.Millisecond}, []time.Duration{0, 150 * time.Millisecond}, timeout.ErrElapsed, 250 * time.Millisecond},
		// 150: attempt 2, never answered: cancelled at 250.
		{"DuringAttempt", wait50, []time.Duration{100 * time.Millisecond, 0}, []time.Duration{0, 150 * time.Millisecond}, timeout.ErrElapsed, 250 * time.Millisecond},
		// Attempt 2 fails at 220: the next one could not start before
		// 270, past the deadline, so its error is returned at 220.
		{"StandardPolicyGivesUpEarly", retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(10), retry.WithBackoff(backoff50)),
			[]time.Duration{100 * time.Millisecond, 70 * time.Millisecond}, []time.Duration{0, 150 * time.Millisecond}, failed, 220 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := stack.New[string, string]().
					Layer(timeout.NewLayer[string, string](250 * time.Millisecond)).
					Layer(retry.NewLayer(tt.policy)).
					Service(mock)
				start := time.Now()
				c := towertest.GoRequest(t.Context(), svc, "req")
				var last *towertest.Request[string, string]
				for i, at := range tt.attempts {
					time.Sleep(at - time.Since(start))
					last = rhTake(t, h, "req", start, at)
					if tt.answers[i] != 0 {
						time.Sleep(tt.answers[i])
						last.Fail(failed)
					}
				}
				if res, err := c.Wait(); err != tt.wantErr || c.Since(start) != tt.at {
					t.Errorf("got %q, %v at %v; want error %v at %v", res, err, c.Since(start), tt.wantErr, tt.at)
				}
				if tt.answers[len(tt.answers)-1] == 0 && context.Cause(last.Context()) != timeout.ErrElapsed {
					t.Errorf("the last attempt's context ended with cause %v, want %v", context.Cause(last.Context()), timeout.ErrElapsed)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if n := h.Calls(); n != len(tt.attempts) {
					t.Errorf("inner service got %d calls, want %d: an attempt started after the deadline", n, len(tt.attempts))
				}
			})
		})
	}
}

// Hedge > Buffer(1): the hedge takes a queue slot only once its delay has
// passed, and waits for one like any caller. A first period teaches the
// Hedge a latency of 10ms; then:
//
//	1000ms  A's original goes through the Buffer; the slot is free again
//	1005ms  the slot is free (no hedge holds it); C takes it and holds it
//	1010ms  A's hedge waits in the Buffer's Ready
//	1020ms  C gives the slot back; the hedge takes it and reaches the mock
//	1025ms  the hedge answers first; A's original is cancelled
func TestStackHedgeBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		buf := buffer.NewLayer[string, string](1)
		defer buf.Close()
		svc := stack.New[string, string]().
			Layer(hedge.NewLayer[string, string](hedge.Idempotent[string]{}, 1, 0.5, time.Second)).
			Layer(buf).
			Service(mock)
		start := time.Now()

		w := towertest.GoRequest(t.Context(), svc, "warm")
		warm := rhTake(t, h, "warm", start, 0)
		time.Sleep(10 * time.Millisecond)
		warm.Respond("warm")
		w.Wait()
		time.Sleep(990 * time.Millisecond)

		a := towertest.GoRequest(t.Context(), svc, "a")
		orig := rhTake(t, h, "a", start, 1000*time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		p, ok, err := tower.ReadyNow[string, string](svc)
		if !ok || err != nil {
			t.Fatalf("ReadyNow at 1005ms: got %t, %v; want the free slot: the pending hedge must not hold one", ok, err)
		}
		time.Sleep(5 * time.Millisecond)
		h.ExpectNoneSettled(t) // the hedge waits for the slot C holds
		time.Sleep(10 * time.Millisecond)
		p.Release()
		hedged := rhTake(t, h, "a", start, 1020*time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		hedged.Respond("from the hedge")
		if res, err := a.Wait(); err != nil || res != "from the hedge" || a.Since(start) != 1025*time.Millisecond {
			t.Errorf("A: got %q, %v at %v; want %q, nil at 1025ms", res, err, a.Since(start), "from the hedge")
		}
		if err := orig.Context().Err(); err != context.Canceled {
			t.Errorf("A's original's context: got %v, want %v", err, context.Canceled)
		}
		synctest.Wait()
		if n, o := h.Calls(), h.Outstanding(); n != 3 || o != 0 {
			t.Errorf("inner service: %d calls, %d reservations outstanding; want 3, 0", n, o)
		}
		p, ok, err = tower.ReadyNow[string, string](svc)
		if !ok || err != nil {
			t.Fatalf("ReadyNow after the call: got %t, %v; want the slot back", ok, err)
		}
		p.Release()
	})
}

// Retry > LoadShed > ConcurrencyLimit(1): a shed request fails at once
// with ErrOverloaded, and the Retry tries it again only while its budget
// lasts; then the caller gets ErrOverloaded, the last result. The budget
// (TPSBudget(1s, 2, 0)) holds 2 retries a second; the backoff is 10ms.
//
//	   0ms  X holds the permit; A is shed and retried (1 left)
//	  10ms  A is shed again and retried (0 left)
//	  15ms  X answers
//	  20ms  A goes through; Y takes the permit
//	  20ms  B is shed: no retry, ErrOverloaded at once
//	1100ms  the withdrawals have expired: C is shed 3 times, to 1120ms
func TestStackRetryLoadShed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		backoff := retry.NewExponentialBackoff(10*time.Millisecond, 10*time.Millisecond, 0)
		shed := func(_ string, err error) bool { return errors.Is(err, loadshed.ErrOverloaded) }
		policy := retry.NewPolicy[string, string](shed, retry.WithMaxAttempts(5),
			retry.WithBackoff(backoff), retry.WithBudget(retry.NewTPSBudget(time.Second, 2, 0)))
		start := time.Now()
		counter := &rhCounter{start: start}
		svc := stack.New[string, string]().
			Layer(retry.NewLayer(policy)).
			Layer(tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
				counter.inner = inner
				return counter
			})).
			Layer(loadshed.NewLayer[string, string]()).
			Layer(limit.NewConcurrencyLayer[string, string](1)).
			Service(mock)
		check := func(name string, c *towertest.Outcome[string], res string, err error, at time.Duration, attempts ...time.Duration) {
			t.Helper()
			if got, gotErr := c.Wait(); got != res || gotErr != err || c.Since(start) != at {
				t.Errorf("%s: got %q, %v at %v; want %q, %v at %v", name, got, gotErr, c.Since(start), res, err, at)
			}
			if got := counter.take(); !rhSame(got, attempts) {
				t.Errorf("%s: attempts at %v, want %v", name, got, attempts)
			}
		}

		x := towertest.GoRequest(t.Context(), svc, "x")
		rx := rhTake(t, h, "x", start, 0)
		counter.take()
		a := towertest.GoRequest(t.Context(), svc, "a")
		time.Sleep(15 * time.Millisecond)
		rx.Respond("x ok")
		if res, err := x.Wait(); res != "x ok" || err != nil {
			t.Errorf("X: got %q, %v; want %q, nil", res, err, "x ok")
		}
		time.Sleep(5 * time.Millisecond)
		rhTake(t, h, "a", start, 20*time.Millisecond).Respond("a ok")
		check("A", a, "a ok", nil, 20*time.Millisecond, 0, 10*time.Millisecond, 20*time.Millisecond)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		y := towertest.GoRequest(ctx, svc, "y")
		rhTake(t, h, "y", start, 20*time.Millisecond) // Y holds the permit from now on
		counter.take()
		b := towertest.GoRequest(t.Context(), svc, "b")
		check("B", b, "", loadshed.ErrOverloaded, 20*time.Millisecond, 20*time.Millisecond)

		time.Sleep(1080 * time.Millisecond)
		c := towertest.GoRequest(t.Context(), svc, "c")
		time.Sleep(20 * time.Millisecond)
		check("C", c, "", loadshed.ErrOverloaded, 1120*time.Millisecond, 1100*time.Millisecond, 1110*time.Millisecond, 1120*time.Millisecond)
		cancel()
		y.Wait()
	})
}
