package buffer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// countsAt sleeps until at after start, lets the bubble settle, and fails t
// unless c holds want.
func countsAt(t *testing.T, start time.Time, at time.Duration, c *metrics.Counts, want metrics.Snapshot) {
	t.Helper()
	time.Sleep(at - time.Since(start))
	synctest.Wait()
	if got := c.Snapshot(); got != want {
		t.Errorf("at %v: got %v, want %v", time.Since(start), got, want)
	}
}

// wantCounts lets the bubble settle and fails t unless c holds want.
func wantCounts(t *testing.T, what string, c *metrics.Counts, want metrics.Snapshot) {
	t.Helper()
	synctest.Wait()
	if got := c.Snapshot(); got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// Buffer(1) > ConcurrencyLimit(1) > 100ms per call, five callers at 0ms.
// The first skips the queue; the second is in its turn, the third queued,
// and the last two wait in Ready for the one slot. Every 100ms the request
// in turn gets the permit and hands the turn on, and the next request's
// slot goes to the next caller waiting in Ready.
func TestMetricsQueuedAndWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			time.Sleep(100 * time.Millisecond)
			return req, nil
		})
		b := buffer.New[string, string](limit.NewConcurrency[string, string](handler, 1), 1, buffer.WithMetrics(&c))
		defer b.Close()
		start := time.Now()
		var wg sync.WaitGroup
		at := make([]time.Duration, 5)
		for i, req := range []string{"a", "b", "c", "d", "e"} {
			wg.Go(func() {
				if _, err := tower.Call(t.Context(), svc(b), req); err != nil {
					t.Errorf("%s: got error %v, want none", req, err)
				}
				at[i] = time.Since(start)
			})
			synctest.Wait()
		}
		countsAt(t, start, 0, &c, metrics.Snapshot{Queued: 2, Waiting: 2})
		countsAt(t, start, 100*time.Millisecond, &c, metrics.Snapshot{Queued: 2, Waiting: 1})
		countsAt(t, start, 200*time.Millisecond, &c, metrics.Snapshot{Queued: 2})
		countsAt(t, start, 300*time.Millisecond, &c, metrics.Snapshot{Queued: 1})
		countsAt(t, start, 400*time.Millisecond, &c, metrics.Snapshot{})
		wg.Wait()
		if got, want := fmt.Sprint(at), "[100ms 200ms 300ms 400ms 500ms]"; got != want {
			t.Errorf("answered at %s, want %s", got, want)
		}
	})
}

// A request whose caller gives up leaves Queued at once; Close counts out
// what is still queued or in turn, and the callers waiting in Ready.
func TestMetricsSkipAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		b := buffer.NewLayer[string, string](2, buffer.WithMetrics(&c))
		s := b.Wrap(m)
		ctx, cancel := context.WithCancel(t.Context())
		a := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "a") // in turn
		bb := towertest.GoCall(ctx, towertest.MustReady(t, s), "b")
		cc := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "c")
		wantCounts(t, "three queued", &c, metrics.Snapshot{Queued: 3})
		cancel()
		bb.ExpectError(t, context.Canceled)
		wantCounts(t, "b gave up", &c, metrics.Snapshot{Queued: 2})

		h.Allow(1)
		h.ExpectSettled(t, "a").Respond("A")
		a.ExpectValue(t, "A")
		wantCounts(t, "a answered, c in turn", &c, metrics.Snapshot{Queued: 1})

		d := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "d")
		e := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "e")
		f := towertest.GoReady(t.Context(), s)
		wantCounts(t, "c in turn, d and e queued, f waiting", &c, metrics.Snapshot{Queued: 3, Waiting: 1})
		b.Close()
		wantCounts(t, "closed", &c, metrics.Snapshot{})
		for _, o := range []*towertest.Outcome[string]{cc, d, e} {
			o.ExpectError(t, buffer.ErrClosed)
		}
		f.ExpectError(t, buffer.ErrClosed)
	})
}

// When the inner service fails, what was queued leaves Queued.
func TestMetricsInnerFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		b := buffer.New[string, string](m, 2, buffer.WithMetrics(&c))
		defer b.Close()
		a := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "a")
		bb := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "b")
		wantCounts(t, "two queued", &c, metrics.Snapshot{Queued: 2})
		h.FailReady(errFoobar)
		for _, o := range []*towertest.Outcome[string]{a, bb} {
			_, err := o.Wait()
			wantServiceError(t, err)
		}
		wantCounts(t, "failed", &c, metrics.Snapshot{})
	})
}

// A request that skips the queue is never Queued; a caller that finds a
// slot, or asks with a done ctx and finds none, never Waiting.
func TestMetricsNoWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](m, 1, buffer.WithMetrics(&c))
		defer b.Close()
		p := towertest.MustReady(t, b)
		if _, ok, _ := tower.ReadyNow[string, string](b); ok {
			t.Fatal("ReadyNow with the only slot taken: got ready, want not ready")
		}
		wantCounts(t, "slot taken", &c, metrics.Snapshot{})
		o := towertest.GoCall(t.Context(), p, "a")
		h.ExpectSettled(t, "a").Respond("A")
		o.ExpectValue(t, "A")
		wantCounts(t, "skipped the queue", &c, metrics.Snapshot{})
	})
}

// With a sink, a request that skips the queue allocates nothing.
func TestMetricsDoNotAllocate(t *testing.T) {
	var c metrics.Counts
	b := buffer.New(echo, 1, buffer.WithMetrics(&c))
	defer b.Close()
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tower.Call[int, int](ctx, b, 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}

func TestOptionPanics(t *testing.T) {
	m, _ := towertest.NewMock[string, string]()
	tests := []struct {
		name, want string
		f          func()
	}{
		{"New", "buffer.New: option 0 is nil", func() { buffer.New[string, string](m, 1, nil) }},
		{"NewLayer", "buffer.NewLayer: option 1 is nil", func() { buffer.NewLayer[string, string](1, buffer.WithMetrics(nil), nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

// panickySink is a metrics.Counts that panics with v on the first Add of
// delta to Queued once armed.
type panickySink struct {
	metrics.Counts
	mu    sync.Mutex
	armed bool
	delta int64
	v     any
}

func (s *panickySink) Add(k metrics.Kind, delta int64) {
	s.mu.Lock()
	fire := s.armed && k == metrics.Queued && delta == s.delta
	if fire {
		s.armed = false
	}
	s.mu.Unlock()
	if fire {
		panic(s.v)
	}
	s.Counts.Add(k, delta)
}

// A sink that panics as a request is queued, on the caller's goroutine:
// the panic goes on up to the caller, whose request is not queued, and its
// slot comes back; the Buffer serves on.
func TestSinkPanicOnCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := errors.New("sink's bug")
		sink := &panickySink{armed: true, delta: 1, v: v}
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		b := buffer.New[string, string](m, 1, buffer.WithMetrics(sink))
		defer b.Close()
		if _, got, _ := callRecovering(t.Context(), b, "hello"); got != v {
			t.Errorf("the caller's goroutine panicked with %v, want %v", got, v)
		}
		if n := buffer.SlotsFree(b); n != 1 {
			t.Fatalf("%d of 1 slots free after the panic, want 1: the caller's slot leaked", n)
		}
		call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "next")
		h.Allow(1)
		h.ExpectSettled(t, "next").Respond("ok")
		call.ExpectValue(t, "ok")
		wantCounts(t, "served", &sink.Counts, metrics.Snapshot{})
	})
}

// A sink that panics as it counts a request out of Queued, on the caller's
// goroutine, after the request got the inner permit: the panic goes on up
// to the caller, the permit is released and the slot is back; the Buffer
// serves on.
func TestSinkPanicAsRequestLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := errors.New("sink's bug")
		sink := &panickySink{armed: true, delta: -1, v: v}
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		b := buffer.New[string, string](m, 1, buffer.WithMetrics(sink))
		o := towertest.Go(func() (string, error) {
			_, p, _ := callRecovering(t.Context(), b, "hello")
			if p != any(v) {
				t.Errorf("the caller's goroutine panicked with %v, want %v", p, v)
			}
			return "", nil
		})
		synctest.Wait()
		h.Allow(1)
		o.Wait()
		if n, out := h.Calls(), h.Outstanding(); n != 0 || out != 0 {
			t.Errorf("the inner service got %d calls with %d reservations outstanding, want none", n, out)
		}
		if n := buffer.SlotsFree(b); n != 1 {
			t.Errorf("%d of 1 slots free, want 1", n)
		}
		call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "next")
		h.ExpectSettled(t, "next").Respond("ok")
		call.ExpectValue(t, "ok")
	})
}

// waitPanicSink panics when Waiting moves by delta.
type waitPanicSink struct{ delta int64 }

func (s waitPanicSink) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting && delta == s.delta {
		panic("sink exploded")
	}
}
func (waitPanicSink) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as a caller starts or stops waiting for a slot: the
// panic goes on up to the waiter, which holds nothing after it, neither a
// place in line nor a slot, whether its wait ended with the slot (at
// 100ms) or with its ctx (at 50ms). The Buffer serves on.
func TestSinkPanicWhileWaitingForSlot(t *testing.T) {
	for _, tt := range []struct {
		name     string
		delta    int64         // the Add of Waiting that panics
		deadline time.Duration // of the waiter's ctx
		end      time.Duration // when its wait ends
	}{
		{"WaitBegins", +1, time.Hour, 0},
		{"WaitEndsGranted", -1, time.Hour, 100 * time.Millisecond},
		{"WaitEndsCancelled", -1, 50 * time.Millisecond, 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				b := buffer.New[string, string](m, 1, buffer.WithMetrics(waitPanicSink{tt.delta}))
				defer b.Close()
				start := time.Now()
				first := towertest.MustReady(t, b)
				go func() {
					time.Sleep(100 * time.Millisecond)
					first.Release()
				}()
				ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
				defer cancel()
				r := towertest.Go(func() (v any, err error) {
					defer func() { v = recover() }()
					b.Ready(ctx)
					return nil, nil
				})
				if v, _ := r.Wait(); v != "sink exploded" {
					t.Fatalf("the waiter got panic %v, want the sink's", v)
				}
				if got := r.Since(start); got != tt.end {
					t.Errorf("the wait ended at %v, want %v", got, tt.end)
				}
				time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
				synctest.Wait()
				if n := buffer.SlotsFree(b); n != 1 {
					t.Fatalf("at 100ms: %d of 1 slots free, want 1", n)
				}
				call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "next")
				h.ExpectSettled(t, "next").Respond("ok")
				call.ExpectValue(t, "ok")
			})
		})
	}
}
