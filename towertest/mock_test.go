package towertest_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// tower-test's tests/mock.rs: single_request_ready.
func TestMockRequestAndResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		p, err := mock.Ready(t.Context())
		if err != nil {
			t.Fatalf("Ready: %v", err)
		}
		if n := h.Outstanding(); n != 1 {
			t.Errorf("got %d outstanding, want 1", n)
		}
		var got string
		var wg sync.WaitGroup
		wg.Go(func() { got, err = p.Call(t.Context(), "hello") })
		h.Expect(t, "hello").Respond("world")
		wg.Wait()
		if got != "world" || err != nil {
			t.Errorf("got %q, %v; want %q, nil", got, err, "world")
		}
		if n, c := h.Outstanding(), h.Calls(); n != 0 || c != 1 {
			t.Errorf("got %d outstanding and %d calls, want 0 and 1", n, c)
		}
	})
}

// tower-test's tests/mock.rs: backpressure. Allow(0) makes Ready wait;
// Allow wakes it.
func TestMockAllow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		start := time.Now()
		var wg sync.WaitGroup
		var readyAt time.Duration
		wg.Go(func() {
			p, err := mock.Ready(t.Context())
			if err != nil {
				t.Errorf("Ready: %v", err)
				return
			}
			readyAt = time.Since(start)
			p.Release()
		})
		time.Sleep(100 * time.Millisecond) // virtual time
		h.Allow(1)
		wg.Wait()
		if readyAt != 100*time.Millisecond {
			t.Errorf("ready at %v, want 100ms", readyAt)
		}
		// The released reservation gave its allowance back.
		if _, ok, _ := tower.ReadyNow(mock); !ok {
			t.Error("a released reservation did not give its allowance back")
		}
	})
}

func TestMockAllowCounts(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	h.Allow(2)
	var held []tower.Permit[string, string]
	for range 3 {
		if p, ok, _ := tower.ReadyNow(mock); ok {
			held = append(held, p)
		}
	}
	if len(held) != 2 {
		t.Errorf("Allow(2) granted %d reservations, want 2", len(held))
	}
	h.AllowAll()
	if _, ok, _ := tower.ReadyNow(mock); !ok {
		t.Error("AllowAll did not make the mock ready")
	}
}

func TestMockFailReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		broken := errors.New("broken")
		var err error
		var wg sync.WaitGroup
		wg.Go(func() { _, err = mock.Ready(t.Context()) })
		synctest.Wait()
		h.FailReady(broken) // wakes the waiter
		wg.Wait()
		if err != broken {
			t.Errorf("got %v, want %v", err, broken)
		}
	})
}

func TestMockClose(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	h.Close()
	if _, err := mock.Ready(t.Context()); err != towertest.ErrClosed {
		t.Errorf("got %v, want %v", err, towertest.ErrClosed)
	}
	if got := towertest.ErrClosed.Error(); got != "service closed" {
		t.Errorf("got message %q, want %q", got, "service closed")
	}
}

func TestMockReadyCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := mock.Ready(ctx); err != context.DeadlineExceeded {
			t.Errorf("got %v, want %v", err, context.DeadlineExceeded)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("got %d outstanding, want 0", n)
		}
	})
}

func TestMockCallCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		ctx, cancel := context.WithCancel(t.Context())
		p, _ := mock.Ready(ctx)
		var err error
		var wg sync.WaitGroup
		wg.Go(func() { _, err = p.Call(ctx, "hello") })
		r := h.Expect(t, "hello")
		cancel()
		wg.Wait()
		if err != context.Canceled {
			t.Errorf("got %v, want %v", err, context.Canceled)
		}
		if r.Context().Err() == nil {
			t.Error("the request's context is not done")
		}
		r.Respond("late") // ignored, does not block
	})
}

func TestMockFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		boom := errors.New("boom")
		var err error
		var wg sync.WaitGroup
		wg.Go(func() { _, err = tower.Call(t.Context(), mock, "hello") })
		r := h.Expect(t, "hello")
		r.Fail(boom)
		r.Respond("ignored") // a request is answered once
		wg.Wait()
		if err != boom {
			t.Errorf("got %v, want %v", err, boom)
		}
	})
}

func TestMockTryNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		if _, ok := h.TryNext(); ok {
			t.Fatal("TryNext returned a request before any was sent")
		}
		var wg sync.WaitGroup
		for _, req := range []string{"one", "two"} {
			wg.Go(func() { tower.Call(t.Context(), mock, req) })
			synctest.Wait()
		}
		for _, want := range []string{"one", "two"} {
			h.ExpectNow(t, want).Respond(want)
		}
		h.ExpectNone(t)
		wg.Wait()
	})
}

func TestMockAllowNegative(t *testing.T) {
	_, h := towertest.NewMock[string, string]()
	defer func() {
		if got, want := recover(), "towertest: Allow(-1): n must not be negative"; got != want {
			t.Errorf("panicked with %v, want %q", got, want)
		}
	}()
	h.Allow(-1)
}

func TestMockConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] {
			return tower.Stack[string, string]() // the mock alone
		},
		Request:  "hello",
		Response: "world",
	}.Run(t)
}

// PanicReady makes one Ready panic, on the goroutine that called it, even
// one that is waiting; Request.Panic makes the call panic on the caller's.
func TestMockPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		var ready any
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { ready = recover() }()
			mock.Ready(t.Context())
		})
		synctest.Wait()
		h.PanicReady("in Ready")
		wg.Wait()
		if ready != "in Ready" {
			t.Errorf("the waiting Ready panicked with %v, want %q", ready, "in Ready")
		}
		h.AllowAll()
		p, err := mock.Ready(t.Context())
		if err != nil {
			t.Fatalf("Ready after the panic: %v", err)
		}
		var call any
		wg.Go(func() {
			defer func() { call = recover() }()
			p.Call(t.Context(), "hello")
		})
		h.Expect(t, "hello").Panic("in Call")
		wg.Wait()
		if call != "in Call" {
			t.Errorf("the call panicked with %v, want %q", call, "in Call")
		}
		towertest.Panics(t, "towertest: PanicReady(nil)", func() { h.PanicReady(nil) })
	})
}

// The settled expectations see what the test's goroutines did by now, and
// nothing later: virtual time does not move.
func TestMockSettledExpectations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		start := time.Now()
		late := towertest.Go(func() (string, error) {
			time.Sleep(10 * time.Millisecond)
			return tower.Call(t.Context(), mock, "late")
		})
		now := towertest.Go(func() (string, error) { return tower.Call(t.Context(), mock, "now") })
		h.ExpectSettled(t, "now").Respond("1")
		h.ExpectNoneSettled(t)
		h.ExpectIdle(t, 1)
		if got := time.Since(start); got != 0 {
			t.Errorf("the expectations took %v, want 0", got)
		}
		now.ExpectValue(t, "1")

		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "late").Respond("2")
		late.ExpectValue(t, "2")
		h.ExpectIdle(t, 2)

		p := towertest.MustReady(t, mock)
		h.ExpectOutstanding(t, 1)
		p.Release()
		h.ExpectOutstanding(t, 0)
	})
}

func TestMockSettledFailures(t *testing.T) {
	tests := []struct {
		name  string
		check func(testing.TB, *towertest.Handle[string, string])
		want  []string
	}{
		{"ExpectSettledOther", func(tb testing.TB, h *towertest.Handle[string, string]) { h.ExpectSettled(tb, "other") },
			[]string{"got request hello, want other"}},
		{"ExpectSettledNone", func(tb testing.TB, h *towertest.Handle[string, string]) {
			h.ExpectSettled(tb, "hello").Respond("1")
			h.ExpectSettled(tb, "again").Respond("2")
			h.ExpectSettled(tb, "more")
		}, []string{"no request has arrived, want more"}},
		{"ExpectNoneSettled", func(tb testing.TB, h *towertest.Handle[string, string]) {
			h.ExpectSettled(tb, "hello").Respond("world")
			h.ExpectNoneSettled(tb)
		}, []string{"got request again, want none"}},
		{"ExpectIdle", func(tb testing.TB, h *towertest.Handle[string, string]) { h.ExpectIdle(tb, 0) },
			[]string{"the mock got 2 calls, want 0", "the mock has 1 reservations outstanding, want 0"}},
		{"ExpectOutstanding", func(tb testing.TB, h *towertest.Handle[string, string]) { h.ExpectOutstanding(tb, 0) },
			[]string{"the mock has 1 reservations outstanding, want 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				held := towertest.MustReady(t, mock)
				defer held.Release()
				ctx, cancel := context.WithCancel(t.Context())
				var calls []*towertest.Outcome[string]
				for _, req := range []string{"hello", "again"} {
					calls = append(calls, towertest.GoRequest(ctx, mock, req))
				}
				got := failures(t, func(tb testing.TB) { tt.check(tb, h) })
				if !slices.Equal(got, tt.want) {
					t.Errorf("reported %q, want %q", got, tt.want)
				}
				// Answer what the check left, and end the calls of the requests
				// it took and dropped.
				for r, ok := h.TryNext(); ok; r, ok = h.TryNext() {
					r.Respond(r.Value)
				}
				cancel()
				for _, c := range calls {
					c.Wait()
				}
			})
		})
	}
}
