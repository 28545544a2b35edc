package timeout_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

var abandon = []timeout.Option{timeout.WithMode(timeout.Abandon)}

// honouring is an inner service that takes a second, or gives up with its
// context's error as soon as its context ends.
func honouring(ctx context.Context, req string) (string, error) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-t.C:
		return req, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// The caller's own context against a Timeout of 150ms. A caller deadline
// before the Timeout's, or at the same instant, governs: the caller gets
// context.DeadlineExceeded, never ErrElapsed. A later one leaves ErrElapsed
// in charge. A cancellation before the deadline reaches the caller as
// context.Canceled. An inner that honours its context answers when the
// first of them ends; against one that ignores it and takes 300ms,
// Cooperative answers when the inner returns and Abandon when the first
// one ends; the error is the same.
func TestCallerContext(t *testing.T) {
	withTimeout := func(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
		return func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, d) }
	}
	cancelAfter := func(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
		return func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(d, cancel)
			return ctx, cancel
		}
	}
	callers := []struct {
		name string
		ctx  func(context.Context) (context.Context, context.CancelFunc)
		want error
		ends time.Duration // when the caller's context or the Timeout ends the wait
	}{
		{"DeadlineEarlier", withTimeout(100 * ms), context.DeadlineExceeded, 100 * ms},
		{"DeadlineEqual", withTimeout(150 * ms), context.DeadlineExceeded, 150 * ms},
		{"DeadlineLater", withTimeout(200 * ms), timeout.ErrElapsed, 150 * ms},
		{"CancelBeforeDeadline", cancelAfter(50 * ms), context.Canceled, 50 * ms},
	}
	inners := []struct {
		name  string
		inner tower.ServiceFunc[string, string]
		opts  []timeout.Option
		at    func(ends time.Duration) time.Duration
	}{
		{"Cooperative/Honours", honouring, nil, func(ends time.Duration) time.Duration { return ends }},
		{"Abandon/Honours", honouring, abandon, func(ends time.Duration) time.Duration { return ends }},
		{"Cooperative/Ignores", sleeper(300 * ms), nil, func(time.Duration) time.Duration { return 300 * ms }},
		{"Abandon/Ignores", sleeper(300 * ms), abandon, func(ends time.Duration) time.Duration { return ends }},
	}
	for _, in := range inners {
		for _, c := range callers {
			t.Run(in.name+"/"+c.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					svc := timeout.New(in.inner, 150*ms, in.opts...)
					ctx, cancel := c.ctx(t.Context())
					defer cancel()
					start := time.Now()
					res, err := tower.Call(ctx, svc, "hello")
					got := outcome{res, err, time.Since(start)}
					if want := (outcome{err: c.want, at: in.at(c.ends)}); got != want {
						t.Errorf("got %v, want %v", got, want)
					}
					time.Sleep(time.Second) // let an abandoned inner call finish
				})
			})
		}
	}
}

// A caller that cancels its context at 50ms, before the deadline of a
// Timeout of 150ms, cancels the inner call's context: the Timeout itself
// replaces only an answer that comes at or after a deadline. So an inner
// call that ignores its context and answers before the deadline, at 100ms,
// is passed on in Cooperative mode; one that answers after it, at 300ms,
// is replaced by context.Canceled, as the caller cancelled first. Abandon
// answers context.Canceled when the caller cancels, and the call goes on
// without it.
func TestCallerCancelsBeforeDeadline(t *testing.T) {
	tests := []struct {
		name  string
		opts  []timeout.Option
		takes time.Duration
		want  outcome
	}{
		{"Cooperative/AnswerBeforeDeadline", nil, 100 * ms, outcome{res: "hello", at: 100 * ms}},
		{"Abandon/AnswerBeforeDeadline", abandon, 100 * ms, outcome{err: context.Canceled, at: 50 * ms}},
		{"Cooperative/AnswerAfterDeadline", nil, 300 * ms, outcome{err: context.Canceled, at: 300 * ms}},
		{"Abandon/AnswerAfterDeadline", abandon, 300 * ms, outcome{err: context.Canceled, at: 50 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				innerErr := make(chan error, 1)
				inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
					time.Sleep(tt.takes)
					innerErr <- ctx.Err()
					return req, nil
				})
				svc := timeout.New(inner, 150*ms, tt.opts...)
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(50*ms, cancel)
				start := time.Now()
				res, err := tower.Call(ctx, svc, "hello")
				if got := (outcome{res, err, time.Since(start)}); got != tt.want {
					t.Errorf("got %v, want %v", got, tt.want)
				}
				if err := <-innerErr; err != context.Canceled {
					t.Errorf("the inner call's context ended with %v, want %v", err, context.Canceled)
				}
			})
		})
	}
}

// An inner service that ignores its context and takes 300ms, under a
// Timeout of 100ms, with a ConcurrencyLimit(1) between them. Cooperative
// runs the call on the caller's goroutine and answers ErrElapsed when it
// returns, at 300ms, with the permit already given back. Abandon answers
// ErrElapsed at 100ms from a goroutine of its own, while the inner keeps
// running, and holding its permit, until 300ms: a second caller waits in
// Ready until then. Either way the late response is discarded.
func TestInnerIgnoresContext(t *testing.T) {
	tests := []struct {
		name          string
		opts          []timeout.Option
		answered      time.Duration
		freeAnswered  int // permits free when the caller hears
		sameGoroutine bool
	}{
		{"Cooperative", nil, 300 * ms, 1, true},
		{"Abandon", abandon, 100 * ms, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var (
					innerG   string
					returned time.Duration
				)
				inner := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
					innerG = goid()
					time.Sleep(300 * ms)
					returned = time.Since(start)
					return "late", nil
				})
				lim := limit.NewConcurrency(inner, 1)
				svc := timeout.New(lim, 100*ms, tt.opts...)

				callerG := goid()
				res, err := tower.Call(t.Context(), svc, "hello")
				got := outcome{res, err, time.Since(start)}
				if want := (outcome{err: timeout.ErrElapsed, at: tt.answered}); got != want {
					t.Errorf("got %v, want %v", got, want)
				}
				if n := lim.Semaphore().Available(); n != tt.freeAnswered {
					t.Errorf("got %d permits free when the caller heard, want %d", n, tt.freeAnswered)
				}

				// A second caller gets the permit when the first call's
				// inner returns. Getting it orders the inner's writes
				// before the reads below.
				p := towertest.MustReady(t, svc)
				if at := time.Since(start); at != 300*ms {
					t.Errorf("second caller got its permit at %v, want 300ms", at)
				}
				p.Release()
				if returned != 300*ms {
					t.Errorf("inner returned at %v, want 300ms", returned)
				}
				if same := innerG == callerG; same != tt.sameGoroutine {
					t.Errorf("inner ran on the caller's goroutine: got %t, want %t", same, tt.sameGoroutine)
				}
			})
		})
	}
}

// A response that arrives just before, at, or just after the deadline of
// 150ms, from an inner that ignores its context. In Cooperative mode the
// Timeout sees the response and the deadline together, on the caller's
// goroutine, and a response at the very instant of the deadline wins, as in
// tower. In Abandon mode the response must come before the deadline: one
// that arrives at its very instant races the timer from another goroutine,
// so it is always counted as late. Each case runs many times, to catch an
// outcome that depends on the scheduler.
func TestResponseAtDeadline(t *testing.T) {
	tests := []struct {
		name  string
		opts  []timeout.Option
		takes time.Duration
		want  outcome
	}{
		{"Cooperative/Before", nil, 149 * ms, outcome{res: "hello", at: 149 * ms}},
		{"Cooperative/At", nil, 150 * ms, outcome{res: "hello", at: 150 * ms}},
		{"Cooperative/After", nil, 151 * ms, outcome{err: timeout.ErrElapsed, at: 151 * ms}},
		{"Abandon/Before", abandon, 149 * ms, outcome{res: "hello", at: 149 * ms}},
		{"Abandon/At", abandon, 150 * ms, outcome{err: timeout.ErrElapsed, at: 150 * ms}},
		{"Abandon/After", abandon, 151 * ms, outcome{err: timeout.ErrElapsed, at: 150 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc := timeout.New(sleeper(tt.takes), 150*ms, tt.opts...)
				for i := range 100 {
					start := time.Now()
					res, err := tower.Call(t.Context(), svc, "hello")
					if got := (outcome{res, err, time.Since(start)}); got != tt.want {
						t.Fatalf("run %d: got %v, want %v", i, got, tt.want)
					}
					time.Sleep(time.Second) // let an abandoned inner call finish
				}
			})
		})
	}
}

// goid returns the id of the calling goroutine, from the first line of its
// stack trace ("goroutine 18 [running]:").
func goid() string {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	return strings.Fields(string(buf[:n]))[1]
}
