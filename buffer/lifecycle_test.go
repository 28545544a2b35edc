package buffer_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// A caller that gives up while its request is queued behind another one is
// skipped: the request leaves the queue at once, and the inner
// service never sees it.
func TestCanceledWhileQueuedNeverReachesInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 2)
		h.Allow(0)
		call1 := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello1") // in hand
		ctx2, cancel2 := context.WithCancel(t.Context())
		call2 := towertest.GoCall(ctx2, towertest.MustReady(t, b), "hello2") // queued
		call3 := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello3")

		cancel2()
		call2.ExpectError(t, context.Canceled)
		h.Allow(1)
		h.ExpectSettled(t, "hello1").Respond("world1")
		call1.ExpectValue(t, "world1")
		h.Allow(1)
		h.ExpectSettled(t, "hello3").Respond("world3")
		call3.ExpectValue(t, "world3")
		if n := h.Calls(); n != 2 {
			t.Errorf("the inner service got %d calls, want 2", n)
		}
	})
}

// grantHook runs onGrant, once, when the inner service grants a permit to a
// Ready that had to wait.
type grantHook struct {
	svc
	once    sync.Once
	onGrant func()
}

func (s *grantHook) Ready(ctx context.Context) (permit, error) {
	waited := ctx.Err() == nil
	p, err := s.svc.Ready(ctx)
	if err == nil && waited {
		s.once.Do(s.onGrant)
	}
	return p, err
}

// The caller gives up at the very moment the inner service grants the
// permit its request waited for: the caller gets its ctx's error, the
// inner service's reservation is released, and the next request is served.
func TestCanceledAsInnerBecomesReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		ctx, cancel := context.WithCancel(t.Context())
		inner := &grantHook{svc: m, onGrant: cancel}
		b := buffer.New[string, string](inner, 1)
		defer b.Close()

		p := towertest.MustReady(t, b)
		call := towertest.GoCall(ctx, p, "hello")
		h.Allow(1)
		call.ExpectError(t, context.Canceled)
		synctest.Wait()
		if n := h.Outstanding(); n != 0 {
			t.Errorf("the inner service has %d reservations outstanding, want 0: the caller must release the one it got as it left", n)
		}
		h.ExpectNoneSettled(t)

		next2 := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello2")
		h.ExpectSettled(t, "hello2").Respond("world2")
		next2.ExpectValue(t, "world2")
	})
}

// The ctx given to Call bounds the whole wait for the inner service: a
// deadline on it fails the call at that deadline, with its error unchanged,
// and the request never reaches the inner service.
func TestCallDeadlineCoversTheWaitForInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 1)
		h.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		p := towertest.MustReady(t, b)
		begin := time.Now()
		_, err := p.Call(ctx, "hello")
		if err != context.DeadlineExceeded {
			t.Errorf("got error %v, want %v", err, context.DeadlineExceeded)
		}
		if got := time.Since(begin); got != 100*time.Millisecond {
			t.Errorf("Call returned after %v, want 100ms", got)
		}
		h.AllowAll()
		h.ExpectNoneSettled(t)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("the inner service has %d reservations outstanding, want 0", n)
		}
	})
}

// Ready waits for a free slot until its ctx ends, and then returns ctx.Err()
// unchanged, holding nothing.
func TestReadyWaitsForSlotUntilCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBuffer(t, 1)
		held := towertest.MustReady(t, b)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		begin := time.Now()
		if _, err := b.Ready(ctx); err != ctx.Err() || err != context.DeadlineExceeded {
			t.Errorf("got error %v, want ctx.Err() unchanged (%v)", err, context.DeadlineExceeded)
		}
		if got := time.Since(begin); got != 50*time.Millisecond {
			t.Errorf("Ready returned after %v, want 50ms", got)
		}
		held.Release()
		if p, ok, _ := tower.ReadyNow[string, string](b); !ok {
			t.Error("no slot free after the only reservation was released")
		} else {
			p.Release()
		}
	})
}

// After Close, Ready fails with ErrClosed, and so does Call on a permit
// reserved before Close; nothing reaches the inner service, Close can be
// called again, and no goroutine is left (the bubble fails if one is).
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](m, 2)
		before := towertest.MustReady(t, b)
		released := towertest.MustReady(t, b)
		if err := b.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		if err := b.Close(); err != nil {
			t.Errorf("second Close: got %v, want nil", err)
		}
		if _, err := b.Ready(t.Context()); err != buffer.ErrClosed {
			t.Errorf("Ready: got error %v, want %v", err, buffer.ErrClosed)
		}
		if _, ok, err := tower.ReadyNow[string, string](b); ok || err != buffer.ErrClosed {
			t.Errorf("ReadyNow: got %v, %v; want false, %v", ok, err, buffer.ErrClosed)
		}
		if _, err := before.Call(t.Context(), "hello"); err != buffer.ErrClosed {
			t.Errorf("Call on a permit reserved before Close: got error %v, want %v", err, buffer.ErrClosed)
		}
		released.Release()
		synctest.Wait()
		if n := h.Calls(); n != 0 {
			t.Errorf("the inner service got %d calls, want 0", n)
		}
	})
}

// An inner failure is final: later Ready and Call, even on a permit reserved
// before the failure, get the same *ServiceError, and Close afterwards
// changes nothing. The Buffer is not closed here, and the bubble fails if
// a goroutine is left running.
func TestFailureIsFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](m, 2)
		before := towertest.MustReady(t, b)
		h.FailReady(errFoobar)
		_, err := tower.Call[string, string](t.Context(), b, "hello")
		first := wantServiceError(t, err)
		h.AllowAll()

		_, err = before.Call(t.Context(), "hello")
		if err != first {
			t.Errorf("Call on a permit reserved before the failure: got %v, want the first %v", err, first)
		}
		if _, err := b.Ready(t.Context()); err != first {
			t.Errorf("Ready: got %v, want the first %v", err, first)
		}
		synctest.Wait()
		if n := h.Calls(); n != 0 {
			t.Errorf("the inner service got %d calls, want 0", n)
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		if _, err := b.Ready(t.Context()); err != first {
			t.Errorf("Ready after Close: got %v, want the failure %v, which stands", err, first)
		}
	})
}

// A Buffer the layer made that nothing else references stays with the
// layer, for its Close.
func TestLayerClosesDroppedBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := buffer.NewLayer[string, string](1)
		echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			return req, nil
		})
		if res, err := tower.Call(t.Context(), l.Wrap(echo), "hello"); res != "hello" || err != nil {
			t.Fatalf("Call: got %q, %v; want %q, nil", res, err, "hello")
		}
		runtime.GC()
		runtime.GC()
		l.Close()
	})
}

// A Layer's Close closes every Buffer it made.
func TestLayerCloseClosesEveryBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := buffer.NewLayer[string, string](1)
		var bufs []svc
		echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			return req, nil
		})
		for range 3 {
			bufs = append(bufs, l.Wrap(echo))
		}
		for i, s := range bufs {
			if res, err := tower.Call(t.Context(), s, "hello"); res != "hello" || err != nil {
				t.Fatalf("Buffer %d before Close: got %q, %v; want %q, nil", i, res, err, "hello")
			}
		}
		if err := l.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: got %v, want nil", err)
		}
		for i, s := range bufs {
			if _, err := s.Ready(t.Context()); err != buffer.ErrClosed {
				t.Errorf("Buffer %d: Ready got error %v, want %v", i, err, buffer.ErrClosed)
			}
		}
	})
}

// nilService is a Service whose nil pointer, in an interface, is not ==
// nil: New must see through it.
type nilService struct{ svc }

func TestNewPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"NilInner", func() { buffer.New[string, string](nil, 1) }, "buffer.New: nil inner service"},
		{"TypedNilInner", func() { buffer.New[string, string]((*nilService)(nil), 1) }, "buffer.New: nil inner service"},
		{"NilServiceFunc", func() { buffer.New[string, string](tower.ServiceFunc[string, string](nil), 1) },
			"buffer.New: nil inner service"},
		{"LayerNilInner", func() { buffer.NewLayer[string, string](1).Wrap(nil) }, "buffer.New: nil inner service"},
		{"LayerTypedNilInner", func() { buffer.NewLayer[string, string](1).Wrap((*nilService)(nil)) },
			"buffer.New: nil inner service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

func TestConformance(t *testing.T) {
	for _, bound := range []int{1, 8} {
		t.Run(fmt.Sprintf("Bound%d", bound), func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] { return buffer.NewLayer[string, string](bound) },
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}
