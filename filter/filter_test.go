package filter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/filter"
	"github.com/towergo/tower/towertest"
)

type handle = towertest.Handle[string, string]

// errRejected is what the tests' predicates reject with.
var errRejected = errors.New("rejected")

// kinds builds a Filter over inner from a predicate of each kind, so that
// a test can run on both: New with the predicate, and NewAsync with the
// same predicate ignoring its ctx.
func kinds(pred filter.Predicate[string]) map[string]func(tower.Service[string, string]) tower.Service[string, string] {
	return map[string]func(tower.Service[string, string]) tower.Service[string, string]{
		"New": func(inner tower.Service[string, string]) tower.Service[string, string] {
			return filter.New(inner, pred)
		},
		"NewAsync": func(inner tower.Service[string, string]) tower.Service[string, string] {
			return filter.NewAsync(inner, func(_ context.Context, req string) (string, error) { return pred(req) })
		},
	}
}

// checkIdle fails t unless the inner service holds no reservation and got
// calls calls.
func checkIdle(t *testing.T, h *handle, calls int) {
	t.Helper()
	if n, c := h.Outstanding(), h.Calls(); n != 0 || c != calls {
		t.Errorf("inner has %d reservations outstanding and got %d calls, want 0 and %d", n, c, calls)
	}
}

// tower: passthrough_sync, in tests/filter/async_filter.rs (a file tower
// never compiles). Ten pings through a predicate that accepts everything
// reach the inner service as they are, and each gets its own pong.
func TestFilterPassthrough(t *testing.T) {
	for name, build := range kinds(func(req string) (string, error) { return req, nil }) {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := build(mock)
				for i := range 10 {
					ping, pong := fmt.Sprint("ping-", i), fmt.Sprint("pong-", i)
					wait := towertest.GoRequest(t.Context(), svc, ping).Wait
					h.ExpectNow(t, ping).Respond(pong)
					if res, err := wait(); res != pong || err != nil {
						t.Fatalf("got %q, %v; want %q, nil", res, err, pong)
					}
				}
				checkIdle(t, h, 10)
			})
		})
	}
}

// tower: rejected_sync, in tests/filter/async_filter.rs. A rejected request
// fails with the predicate's error itself, never reaches the inner service,
// and its reservation is given back by the time Call returns.
func TestFilterRejected(t *testing.T) {
	for name, build := range kinds(func(req string) (string, error) { return req, errRejected }) {
		t.Run(name, func(t *testing.T) {
			mock, h := towertest.NewMock[string, string]()
			h.Allow(1) // one reservation: the next Ready needs it back
			svc := build(mock)
			p := towertest.MustReady(t, svc)
			if n := h.Outstanding(); n != 1 {
				t.Fatalf("after Ready: inner has %d reservations outstanding, want 1", n)
			}
			if res, err := p.Call(t.Context(), "hello"); res != "" || err != errRejected {
				t.Errorf("got %q, %v; want \"\", %v", res, err, errRejected)
			}
			checkIdle(t, h, 0)
			if _, ok, err := tower.ReadyNow(svc); !ok || err != nil {
				t.Errorf("ReadyNow after the rejection: got %v, %v; want the reservation back", ok, err)
			}
		})
	}
}

// ruleError is an error that carries data, for errors.As.
type ruleError struct{ rule string }

func (e *ruleError) Error() string { return "broke rule " + e.rule }

// The predicate's error is returned as it is: wrapped errors and error
// types are found by errors.Is and errors.As.
func TestFilterErrorUnchanged(t *testing.T) {
	want := fmt.Errorf("checking: %w", &ruleError{rule: "no-shouting"})
	svc := filter.New(tower.ServiceFunc[string, string](echo), func(req string) (string, error) {
		if strings.ToUpper(req) == req {
			return req, want
		}
		return req, nil
	})
	_, err := tower.Call(t.Context(), svc, "HELLO")
	var re *ruleError
	if err != want || !errors.As(err, &re) || re.rule != "no-shouting" {
		t.Errorf("got %v, want %v with a *ruleError inside", err, want)
	}
}

// The request the predicate returns is the one the inner service receives.
func TestFilterChangesRequest(t *testing.T) {
	for name, build := range kinds(func(req string) (string, error) { return strings.TrimSpace(req), nil }) {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				wait := towertest.GoRequest(t.Context(), build(mock), "  hello ").Wait
				h.ExpectNow(t, "hello").Respond("world")
				if res, err := wait(); res != "world" || err != nil {
					t.Errorf("got %q, %v; want %q, nil", res, err, "world")
				}
			})
		})
	}
}

type ctxKey struct{}

// An async predicate runs in Call with the call's ctx, and may take time:
// here it asks another service, which answers after 30ms. The inner
// reservation is held meanwhile, and the request reaches the inner service
// at 30ms; a request the other service refuses is rejected at 30ms, and its
// reservation given back.
func TestAsyncFilterCallsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		auth := tower.ServiceFunc[string, bool](func(ctx context.Context, user string) (bool, error) {
			time.Sleep(30 * time.Millisecond)
			return user == ctx.Value(ctxKey{}), nil
		})
		mock, h := towertest.NewMock[string, string]()
		svc := filter.NewAsync(mock, func(ctx context.Context, req string) (string, error) {
			ok, err := tower.Call(ctx, auth, req)
			if err == nil && !ok {
				err = errRejected
			}
			return req, err
		})
		ctx := context.WithValue(t.Context(), ctxKey{}, "ada")

		wait := towertest.GoRequest(ctx, svc, "ada").Wait
		time.Sleep(29 * time.Millisecond)
		synctest.Wait()
		if n, c := h.Outstanding(), h.Calls(); n != 1 || c != 0 {
			t.Errorf("while the predicate runs: inner has %d reservations outstanding and %d calls, want 1 and 0", n, c)
		}
		time.Sleep(time.Millisecond)
		h.ExpectSettled(t, "ada").Respond("welcome")
		if res, err := wait(); res != "welcome" || err != nil {
			t.Errorf("accepted: got %q, %v; want %q, nil", res, err, "welcome")
		}

		start := time.Now()
		if _, err := tower.Call(ctx, svc, "bob"); err != errRejected {
			t.Errorf("refused: got %v, want %v", err, errRejected)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("refused at %v, want 30ms", d)
		}
		checkIdle(t, h, 1)
	})
}

// Filter > Buffer(1): the predicate runs holding only the Buffer's one
// queue slot, not the inner service's capacity; a request it rejects gives
// the slot back at once and never queues, so the next request goes
// straight through.
func TestFilterOverBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		buf := buffer.New[string, string](mock, 1)
		defer buf.Close()
		svc := filter.NewAsync[string, string](buf, func(_ context.Context, req string) (string, error) {
			time.Sleep(10 * time.Millisecond) // a slow check
			if req == "bad" {
				return req, errRejected
			}
			return req, nil
		})
		start := time.Now()
		wait := towertest.GoRequest(t.Context(), svc, "bad").Wait
		if n := h.Outstanding(); n != 0 {
			t.Errorf("while the predicate runs: inner has %d reservations outstanding, want 0", n)
		}
		if _, ok, _ := tower.ReadyNow[string, string](buf); ok {
			t.Error("while the predicate runs: the Buffer's only slot is free, want it held")
		}
		if _, err := wait(); err != errRejected {
			t.Errorf("got %v, want %v", err, errRejected)
		}
		wait = towertest.GoRequest(t.Context(), svc, "good").Wait
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "good").Respond("ok")
		if res, err := wait(); res != "ok" || err != nil {
			t.Errorf("got %q, %v; want %q, nil", res, err, "ok")
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("the second request answered at %v, want 20ms (10ms per check)", d)
		}
		checkIdle(t, h, 1)
	})
}

// The caller gives up while the async predicate waits: the predicate
// returns ctx's error, the caller gets it at that instant, and nothing
// reaches or stays reserved on the inner service.
func TestAsyncFilterContextEndsInPredicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := filter.NewAsync(mock, func(ctx context.Context, req string) (string, error) {
			<-ctx.Done() // an answer that never comes
			return req, ctx.Err()
		})
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := tower.Call(ctx, svc, "hello")
		if err != context.DeadlineExceeded {
			t.Errorf("got %v, want %v", err, context.DeadlineExceeded)
		}
		if d := time.Since(start); d != 40*time.Millisecond {
			t.Errorf("gave up at %v, want 40ms", d)
		}
		checkIdle(t, h, 0)
	})
}

// A predicate that panics gives the inner reservation back on its way out.
func TestFilterPredicatePanicReleasesInner(t *testing.T) {
	for name, build := range kinds(func(string) (string, error) { panic("boom") }) {
		t.Run(name, func(t *testing.T) {
			mock, h := towertest.NewMock[string, string]()
			svc := build(mock)
			p := towertest.MustReady(t, svc)
			func() {
				defer func() {
					if r := recover(); r != "boom" {
						t.Errorf("got panic %v, want %q", r, "boom")
					}
				}()
				p.Call(t.Context(), "hello")
			}()
			checkIdle(t, h, 0)
		})
	}
}

// Ready is the inner service's: its error comes back unchanged, and a
// permit released unused never runs the predicate.
func TestFilterReady(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	ran := 0
	svc := filter.New(mock, func(req string) (string, error) { ran++; return req, nil })
	broken := errors.New("broken")
	h.FailReady(broken)
	if _, err := svc.Ready(t.Context()); err != broken {
		t.Errorf("Ready: got %v, want %v unchanged", err, broken)
	}
	p, _ := svc.Ready(t.Context())
	p.Release()
	checkIdle(t, h, 0)
	if ran != 0 {
		t.Errorf("the predicate ran %d times, want 0", ran)
	}
}

func TestFilterBadInputPanics(t *testing.T) {
	var nilSvc tower.Service[string, string]
	ok := func(req string) (string, error) { return req, nil }
	okAsync := func(_ context.Context, req string) (string, error) { return req, nil }
	tests := []struct {
		want string
		f    func()
	}{
		{"filter.New: nil inner service", func() { filter.New(nilSvc, ok) }},
		{"filter.New: nil predicate", func() { filter.New(echoSvc, nil) }},
		{"filter.NewAsync: nil inner service", func() { filter.NewAsync(nilSvc, okAsync) }},
		{"filter.NewAsync: nil predicate", func() { filter.NewAsync(echoSvc, nil) }},
		{"filter.NewLayer: nil predicate", func() { filter.NewLayer[string, string](nil) }},
		{"filter.NewAsyncLayer: nil predicate", func() { filter.NewAsyncLayer[string, string](nil) }},
		{"filter.New: nil inner service", func() { filter.NewLayer[string, string](ok).Wrap(nil) }},
		{"filter.New: nil inner service", func() { filter.New[string, string]((*towertest.Mock[string, string])(nil), ok) }},
		{"filter.NewAsync: nil inner service", func() { filter.NewAsync[string, string](tower.ServiceFunc[string, string](nil), okAsync) }},
		{"filter.New: nil inner service", func() { filter.NewLayer[string, string](ok).Wrap((*towertest.Mock[string, string])(nil)) }},
		{"filter.New: nil predicate", func() { filter.New(echoSvc, filter.Predicate[string](nil)) }},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

func TestConformance(t *testing.T) {
	layers := map[string]func() tower.Layer[string, string]{
		"NewLayer": func() tower.Layer[string, string] {
			return filter.NewLayer[string, string](func(req string) (string, error) { return req, nil })
		},
		"NewAsyncLayer": func() tower.Layer[string, string] {
			return filter.NewAsyncLayer[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
		},
	}
	for name, newLayer := range layers {
		t.Run(name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: newLayer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}

func echo(_ context.Context, req string) (string, error) { return req, nil }

var echoSvc = tower.Service[string, string](tower.ServiceFunc[string, string](echo))
