package callall_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/callall"
	"github.com/towergo/tower/towertest"
)

// expectPanic fails t unless the next item is a *tower.PanicError from
// where, with a stack, and returns it.
func (c *collector) expectPanic(t *testing.T, where string) *tower.PanicError {
	t.Helper()
	it := c.next(t)
	var pe *tower.PanicError
	if !errors.As(it.err, &pe) {
		t.Fatalf("got item %q, %v; want a *tower.PanicError", it.res, it.err)
	}
	if pe.Where != where || len(pe.Stack) == 0 {
		t.Errorf("got a PanicError from %q with %d bytes of stack, want one from %q with its stack", pe.Where, len(pe.Stack), where)
	}
	return pe
}

// faultyCalls is a service whose Call of the request "fault" faults, and
// answers every other request with itself.
func faultyCalls(fault func()) svc {
	return tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if req == "fault" {
			fault()
		}
		return req, nil
	})
}

// A panic in a call, or runtime.Goexit, on a worker is that request's
// response error, and the sequence goes on: the other requests are
// answered, and it ends as usual. With a limit of 1, the one worker's
// Goexit leaves the next request to the worker that replaces it.
func TestCallFault(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			forEach(t, func(t *testing.T, v variant) {
				reqs := make(chan string, 3)
				for _, r := range []string{"a", "fault", "b"} {
					reqs <- r
				}
				close(reqs)
				c := collect(v.all(t.Context(), faultyCalls(f.Do), reqs, 1), time.Now())
				c.expect(t, "a", 0)
				pe := c.expectPanic(t, "the service's Call, on a callall worker")
				f.Check(t, pe.Value)
				c.expect(t, "b", 0)
				c.ended(t, 0)
			})
		})
	}
}

// faultyReady is a mock whose Ready faults the nth time it is asked.
type faultyReady struct {
	*towertest.Mock[string, string]
	fault func()
	n     int32
	calls atomic.Int32
}

func (f *faultyReady) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if f.calls.Add(1) == f.n {
		f.fault()
	}
	return f.Mock.Ready(ctx)
}

// A panic in the service's Ready, or runtime.Goexit, on the dispatcher is
// the service failing: as with an error from Ready, the PanicError is
// yielded at once, then the response of the request already sent, and the
// sequence ends. Nothing stays reserved.
func TestReadyFault(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			forEach(t, func(t *testing.T, v variant) {
				mock, h := towertest.NewMock[string, string]()
				inner := &faultyReady{Mock: mock, fault: f.Do, n: 2}
				reqs := make(chan string, 3)
				for _, r := range []string{"req0", "req1", "req2"} {
					reqs <- r
				}
				start := time.Now()
				c := collect(v.all(t.Context(), inner, reqs, 4), start)
				pe := c.expectPanic(t, "the service's Ready, on a callall dispatcher")
				f.Check(t, pe.Value)
				c.none(t)
				time.Sleep(10 * time.Millisecond)
				h.ExpectSettled(t, "req0").Respond("res0")
				c.expect(t, "res0", 10*time.Millisecond)
				c.ended(t, 10*time.Millisecond)
				if n := h.Calls(); n != 1 {
					t.Errorf("got %d calls, want 1", n)
				}
				if n := h.Outstanding(); n != 0 {
					t.Errorf("service has %d reservations outstanding, want 0", n)
				}
			})
		})
	}
}

// faultyIter yields the requests of reqs, then faults.
func faultyIter(fault func(), reqs ...string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, r := range reqs {
			if !yield(r) {
				return
			}
		}
		fault()
	}
}

// A panic in the request iterator, or runtime.Goexit, on the dispatcher
// ends the sequence as a failed Ready does: the PanicError is yielded, the
// requests already sent are still answered, and the sequence ends.
func TestIteratorFault(t *testing.T) {
	for _, f := range towertest.Exits {
		for _, all := range []struct {
			name string
			f    func(context.Context, svc, iter.Seq[string], int) iter.Seq2[string, error]
		}{{"Ordered", callall.Ordered[string, string]}, {"Unordered", callall.Unordered[string, string]}} {
			t.Run(f.Name+"/"+all.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					mock, h := towertest.NewMock[string, string]()
					start := time.Now()
					c := collect(all.f(t.Context(), mock, faultyIter(f.Do, "a", "b"), 4), start)
					pe := c.expectPanic(t, "the request iterator, on a callall dispatcher")
					f.Check(t, pe.Value)
					got := received(t, h, 2)
					time.Sleep(10 * time.Millisecond)
					got["a"].Respond("A")
					c.expect(t, "A", 10*time.Millisecond)
					got["b"].Respond("B")
					c.expect(t, "B", 10*time.Millisecond)
					c.ended(t, 10*time.Millisecond)
				})
			})
		}
	}
}

// A panic nobody hears of, because the loop ended early, is logged: one
// in a call whose response the loop left unread, and one in the iterator
// after the loop left.
func TestPanicAfterBreakIsLogged(t *testing.T) {
	tests := []struct {
		name, where string
		all         func(gate chan struct{}) iter.Seq2[string, error]
	}{
		{"Call", "the service's Call, on a callall worker", func(gate chan struct{}) iter.Seq2[string, error] {
			s := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
				if req == "b" {
					<-ctx.Done()
					panic(towertest.ExitValue)
				}
				<-gate // so that "b" is in flight when the loop breaks
				return req, nil
			})
			return callall.Unordered(context.Background(), s, slices.Values([]string{"a", "b"}), 2)
		}},
		{"Iterator", "the request iterator, on a callall dispatcher", func(gate chan struct{}) iter.Seq2[string, error] {
			reqs := func(yield func(string) bool) {
				if !yield("a") {
					return
				}
				<-gate // this iterator does not return when the loop breaks
				panic(towertest.ExitValue)
			}
			return callall.Ordered(context.Background(), faultyCalls(nil), reqs, 2)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := towertest.CaptureLog(t)
				gate := make(chan struct{})
				loop := towertest.Go(func() (string, error) {
					for res, err := range tt.all(gate) {
						return res, err
					}
					return "", nil
				})
				synctest.Wait()
				close(gate)
				if res, err := loop.Wait(); res != "a" || err != nil {
					t.Errorf("the loop got %q, %v; want %q, nil", res, err, "a")
				}
				for _, want := range []string{"recovered a panic that no caller is left to hear of", tt.where, towertest.ExitValue.Error()} {
					if !strings.Contains(log.String(), want) {
						t.Errorf("the log does not say %q:\n%s", want, log.String())
					}
				}
			})
		})
	}
}

// A loop body that panics runs on the caller's goroutine: the panic goes
// on up to the caller once the sequence has stopped, with the call still
// in flight cancelled and the dispatcher and every worker gone (the bubble
// would fail on a goroutine left blocked), and nothing reserved.
func TestLoopBodyPanics(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		reqs := make(chan string, 2)
		reqs <- "a"
		reqs <- "b"
		r := towertest.Go(func() (p any, err error) {
			defer func() { p = recover() }()
			for range v.all(t.Context(), mock, reqs, 2) {
				panic("body exploded")
			}
			return nil, nil
		})
		got := received(t, h, 2)
		got["a"].Respond("A")
		if p, _ := r.Wait(); p != "body exploded" {
			t.Fatalf("the caller got panic %v, want the loop body's", p)
		}
		if err := got["b"].Context().Err(); err == nil {
			t.Error("the call in flight was not cancelled")
		}
		h.ExpectIdle(t, 2)
	})
}
