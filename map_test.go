package tower_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towertest"
)

// The inner service receives f(request), of its own type; the response
// comes back unchanged.
func TestMapRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := tower.MapRequest(mock, strconv.Itoa) // int requests, string for the inner
		wait := towertest.GoRequest(t.Context(), svc, 42).Wait
		h.ExpectNow(t, "42").Respond("done")
		if res, err := wait(); res != "done" || err != nil {
			t.Errorf("got %q, %v; want %q, nil", res, err, "done")
		}
	})
}

// f runs on a response; an error skips f and comes back unchanged, with the
// zero response.
func TestMapResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		calls := 0
		svc := tower.MapResponse(mock, func(res string) int { calls++; return len(res) })

		wait := towertest.GoRequest(t.Context(), svc, "a").Wait
		h.ExpectNow(t, "a").Respond("hello")
		if res, err := wait(); res != 5 || err != nil {
			t.Errorf("success: got %d, %v; want 5, nil", res, err)
		}

		wait = towertest.GoRequest(t.Context(), svc, "b").Wait
		h.ExpectNow(t, "b").Fail(errFailed)
		if res, err := wait(); res != 0 || err != errFailed {
			t.Errorf("failure: got %d, %v; want 0, %v", res, err, errFailed)
		}
		if calls != 1 {
			t.Errorf("f ran %d times, want 1", calls)
		}
	})
}

// mapErrCounting returns a MapErr over inner that wraps each error in
// "mapped: ...", and a pointer to the errors f has seen.
func mapErrCounting(inner tower.Service[string, string]) (tower.Service[string, string], *[]error) {
	var seen []error
	var mu sync.Mutex
	svc := tower.MapErr(inner, func(err error) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, err)
		return fmt.Errorf("mapped: %w", err)
	})
	return svc, &seen
}

// A call's error goes through f; a response does not.
func TestMapErrCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc, seen := mapErrCounting(mock)

		wait := towertest.GoRequest(t.Context(), svc, "a").Wait
		h.ExpectNow(t, "a").Respond("ok")
		if res, err := wait(); res != "ok" || err != nil {
			t.Errorf("success: got %q, %v; want %q, nil", res, err, "ok")
		}

		wait = towertest.GoRequest(t.Context(), svc, "b").Wait
		h.ExpectNow(t, "b").Fail(errFailed)
		_, err := wait()
		if got, want := fmt.Sprint(err), "mapped: failed"; got != want || !errors.Is(err, errFailed) {
			t.Errorf("failure: got %q, want %q wrapping %v", got, want, errFailed)
		}
		if len(*seen) != 1 || (*seen)[0] != errFailed {
			t.Errorf("f saw %v, want [%v]", *seen, errFailed)
		}
	})
}

// A service broken in Ready reports its error through f, whether Ready
// failed at once, while it waited, or when asked with a done ctx.
func TestMapErrReadyError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc, seen := mapErrCounting(mock)
		broken := errors.New("broken")

		h.FailReady(broken)
		_, err := svc.Ready(t.Context())
		if got, want := fmt.Sprint(err), "mapped: broken"; got != want || !errors.Is(err, broken) {
			t.Errorf("failing at once: got %q, want %q wrapping %v", got, want, broken)
		}

		h.Allow(0)
		waiting := towertest.GoReady(t.Context(), svc)
		h.FailReady(broken)
		_, err = waiting.Wait()
		if got, want := fmt.Sprint(err), "mapped: broken"; got != want {
			t.Errorf("failing while waiting: got %q, want %q", got, want)
		}
		// A broken service's error is not ctx's, even if ctx has ended.
		done, cancel := context.WithCancel(t.Context())
		cancel()
		h.FailReady(broken)
		if _, err = svc.Ready(done); fmt.Sprint(err) != "mapped: broken" {
			t.Errorf("failing with a done ctx: got %v, want %q", err, "mapped: broken")
		}
		if len(*seen) != 3 {
			t.Errorf("f ran %d times, want 3", len(*seen))
		}
	})
}

// When Ready's ctx ends while it waits, Ready returns ctx.Err() itself, not
// passed to f, as the contract requires; ReadyNow on a busy service says
// "not now" rather than "broken".
func TestMapErrContextErrorNotMapped(t *testing.T) {
	tests := []struct {
		name string
		ctx  func(context.Context) (context.Context, context.CancelFunc)
		want error
		at   time.Duration
	}{
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 50*time.Millisecond)
		}, context.DeadlineExceeded, 50 * time.Millisecond},
		{"cancelled", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(30*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, 30 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc, seen := mapErrCounting(mock)
				h.Allow(0)
				ctx, cancel := tt.ctx(t.Context())
				defer cancel()
				start := time.Now()
				_, err := svc.Ready(ctx)
				if err != tt.want {
					t.Errorf("got %v, want %v unchanged", err, tt.want)
				}
				if d := time.Since(start); d != tt.at {
					t.Errorf("Ready gave up at %v, want %v", d, tt.at)
				}
				if len(*seen) != 0 {
					t.Errorf("f saw %v, want nothing", *seen)
				}
			})
		})
	}

	t.Run("ReadyNow", func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc, seen := mapErrCounting(mock)
		h.Allow(0)
		if _, ok, err := tower.ReadyNow(svc); ok || err != nil {
			t.Errorf("got ok=%v, err=%v; want false, nil", ok, err)
		}
		if len(*seen) != 0 {
			t.Errorf("f saw %v, want nothing", *seen)
		}
	})
}

// The ctx error of a cancelled call does go through f: errors from Call
// all do. A wrapping f keeps errors.Is working.
func TestMapErrCallContextError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc, seen := mapErrCounting(mock)
		ctx, cancel := context.WithCancel(t.Context())
		wait := towertest.GoRequest(ctx, svc, "a").Wait
		h.ExpectNow(t, "a") // never answered
		cancel()
		_, err := wait()
		if got, want := fmt.Sprint(err), "mapped: context canceled"; got != want || !errors.Is(err, context.Canceled) {
			t.Errorf("got %q, want %q wrapping %v", got, want, context.Canceled)
		}
		if len(*seen) != 1 {
			t.Errorf("f ran %d times, want 1", len(*seen))
		}
	})
}

// An f that returns nil would turn a failure into a zero response, or a
// broken service into a permit-less success: MapErr panics instead.
func TestMapErrNilPanics(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	svc := tower.MapErr(mock, func(error) error { return nil })
	h.FailReady(errFailed)
	towertest.Panics(t, `tower.MapErr: f returned nil for error "failed"; use MapResult to turn an error into a response`,
		func() { svc.Ready(t.Context()) })
}

// f sees every call's outcome and may turn an error into a response or a
// response into an error; an error from Ready does not reach f.
func TestMapResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		var seen []string
		svc := tower.MapResult(mock, func(res string, err error) (int, error) {
			seen = append(seen, fmt.Sprintf("%q %v", res, err))
			if err != nil {
				return -1, nil // a fallback response
			}
			if res == "" {
				return 0, errors.New("empty")
			}
			return len(res), nil
		})
		tests := []struct {
			name    string
			answer  func(*towertest.Request[string, string])
			want    int
			wantErr string
		}{
			{"response", func(r *towertest.Request[string, string]) { r.Respond("hello") }, 5, "<nil>"},
			{"error into response", func(r *towertest.Request[string, string]) { r.Fail(errFailed) }, -1, "<nil>"},
			{"response into error", func(r *towertest.Request[string, string]) { r.Respond("") }, 0, "empty"},
		}
		for _, tt := range tests {
			wait := towertest.GoRequest(t.Context(), svc, tt.name).Wait
			tt.answer(h.ExpectNow(t, tt.name))
			if res, err := wait(); res != tt.want || fmt.Sprint(err) != tt.wantErr {
				t.Errorf("%s: got %d, %v; want %d, %s", tt.name, res, err, tt.want, tt.wantErr)
			}
		}

		broken := errors.New("broken")
		h.FailReady(broken)
		if _, err := svc.Ready(t.Context()); err != broken {
			t.Errorf("Ready: got %v, want %v unchanged", err, broken)
		}
		if len(seen) != 3 {
			t.Errorf("f ran %d times, want 3 (not for the Ready error): %q", len(seen), seen)
		}
	})
}

// tower's tests/builder.rs: builder_service, with the map steps (the retry
// layer is another package's). Buffer(5) > ConcurrencyLimit(5) > RateLimit(5
// per 5s) > MapResponse(r == "world") > MapRequest(r == "hello") over a mock
// of bool requests: the mock receives true, answers "world", and the caller
// gets true. The type-changing steps are functions; the builder's layers
// work on the types the caller sees.
func TestBuilderWithMapSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[bool, string]()
		mapped := tower.MapResponse(
			tower.MapRequest(mock, func(r string) bool { return r == "hello" }),
			func(r string) bool { return r == "world" })
		buf := buffer.NewLayer[string, bool](5)
		defer buf.Close()
		svc := stack.New[string, bool]().
			Layer(buf).
			Layer(limit.NewConcurrencyLayer[string, bool](5)).
			Layer(limit.NewRateLayer[string, bool](5, 5*time.Second)).
			Service(mapped)
		h.Allow(1)
		wait := towertest.GoRequest(t.Context(), svc, "hello").Wait
		h.Expect(t, true).Respond("world")
		if res, err := wait(); !res || err != nil {
			t.Errorf("got %v, %v; want true, nil", res, err)
		}
	})
}

func TestMapConformance(t *testing.T) {
	same := func(s string) string { return s }
	layers := map[string]func() tower.Layer[string, string]{
		"MapRequestLayer":  func() tower.Layer[string, string] { return tower.MapRequestLayer[string, string](same) },
		"MapResponseLayer": func() tower.Layer[string, string] { return tower.MapResponseLayer[string](same) },
		"MapErrLayer": func() tower.Layer[string, string] {
			return tower.MapErrLayer[string, string](func(err error) error { return fmt.Errorf("mapped: %w", err) })
		},
		"MapResultLayer": func() tower.Layer[string, string] {
			return tower.MapResultLayer[string](func(r string, err error) (string, error) { return r, err })
		},
		// Type-changing steps, string -> []byte -> string, as one layer.
		"MapRequest and MapResponse via []byte": func() tower.Layer[string, string] {
			return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
				bytesSvc := tower.MapResponse(tower.MapRequest(inner, func(b []byte) string { return string(b) }),
					func(s string) []byte { return []byte(s) })
				return tower.MapResponse(tower.MapRequest(bytesSvc, func(s string) []byte { return []byte(s) }),
					func(b []byte) string { return string(b) })
			})
		},
	}
	for name, newLayer := range layers {
		t.Run(name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: newLayer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}
