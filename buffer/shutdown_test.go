package buffer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// deafReady is an inner service that is not ready now, and whose Ready,
// once a request waits in it, ignores its context: it returns only when
// the inner service grants a permit, or panics with v when panicNow is
// closed.
type deafReady struct {
	svc
	panicNow chan struct{}
	v        any
}

func (s *deafReady) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() != nil {
		return s.svc.Ready(ctx) // the probe of ReadyNow: not ready
	}
	// The wait for the mock heeds its own context, which only a panic
	// ends, never ctx.
	deaf, stopWaiting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWaiting()
	granted := make(chan struct{})
	var p permit
	var err error
	go func() {
		defer close(granted)
		p, err = s.svc.Ready(deaf)
	}()
	select {
	case <-granted:
		return p, err
	case <-s.panicNow:
		stopWaiting()
		<-granted
		p.Release() // holds nothing, if the mock had not granted
		panic(s.v)
	}
}

// stoppers stop a Buffer over inner, made by New or through a Layer, with
// Shutdown or with Close.
var stoppers = []struct {
	name string
	make func(inner svc) (s svc, shutdown func(context.Context) error, closeIt func() error)
}{
	{"Buffer", func(inner svc) (svc, func(context.Context) error, func() error) {
		b := buffer.New(inner, 1)
		return b, b.Shutdown, b.Close
	}},
	{"Layer", func(inner svc) (svc, func(context.Context) error, func() error) {
		l := buffer.NewLayer[string, string](1)
		return l.Wrap(inner), l.Shutdown, l.Close
	}},
}

// The request whose turn it is waits in an inner Ready that ignores its
// context for 1s. Shutdown with a 10ms context returns
// context.DeadlineExceeded at 10ms. At 1s the inner Ready returns; the
// caller releases the permit it got, since the Buffer closed while it
// waited, and gets ErrClosed; Close returns then, and a Shutdown after it
// returns nil at once.
func TestShutdownDeadline(t *testing.T) {
	for _, st := range stoppers {
		t.Run(st.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				h.Allow(0)
				s, shutdown, closeIt := st.make(&deafReady{svc: m})
				start := time.Now()
				time.AfterFunc(time.Second, func() { h.Allow(1) })
				call := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "hello")

				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				if err := shutdown(ctx); err != context.DeadlineExceeded {
					t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
				}
				if got := time.Since(start); got != 10*time.Millisecond {
					t.Errorf("Shutdown returned after %v, want 10ms", got)
				}
				if call.Done() {
					t.Error("the caller in the deaf Ready returned before it did")
				}

				if err := closeIt(); err != nil {
					t.Errorf("Close: got %v, want nil", err)
				}
				if got := time.Since(start); got != time.Second {
					t.Errorf("Close returned after %v, want 1s, when the inner Ready returns", got)
				}
				call.ExpectError(t, buffer.ErrClosed)
				if err := shutdown(t.Context()); err != nil || time.Since(start) != time.Second {
					t.Errorf("Shutdown after that: got %v at %v, want nil at once", err, time.Since(start))
				}
				synctest.Wait()
				if n, o := h.Calls(), h.Outstanding(); n != 0 || o != 0 {
					t.Errorf("the inner service got %d calls with %d reservations outstanding, want 0 and 0", n, o)
				}
			})
		})
	}
}

// Shutdown of an idle Buffer, or of one whose request in turn waits in an
// inner Ready that heeds its context, returns nil as soon as that Ready
// returns, before its context ends.
func TestShutdownReturnsWhenStopped(t *testing.T) {
	for _, st := range stoppers {
		t.Run(st.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				h.Allow(0)
				s, shutdown, _ := st.make(m)
				call := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "hello")
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				if err := shutdown(ctx); err != nil || time.Since(start) != 0 {
					t.Errorf("Shutdown: got %v after %v, want nil at once", err, time.Since(start))
				}
				call.ExpectError(t, buffer.ErrClosed)
				if n := h.Outstanding(); n != 0 {
					t.Errorf("the inner service has %d reservations outstanding, want 0", n)
				}
			})
		})
	}
}

// The inner Ready panics after Shutdown gave up waiting for it: the panic
// goes on up to the caller waiting in it, and ErrClosed stands.
func TestPanicAfterShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		v := errors.New("late bug")
		inner := &deafReady{svc: m, panicNow: make(chan struct{}), v: v}
		b := buffer.New[string, string](inner, 1)
		var panicked any
		o := towertest.Go(func() (string, error) {
			res, p, err := callRecovering(t.Context(), b, "hello")
			panicked = p
			return res, err
		})
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if err := b.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
		}
		close(inner.panicNow)
		b.Close()
		o.Wait()
		if panicked != any(v) {
			t.Errorf("the caller panicked with %v, want %v", panicked, v)
		}
		if _, err := b.Ready(t.Context()); err != buffer.ErrClosed {
			t.Errorf("Ready: got %v, want %v", err, buffer.ErrClosed)
		}
	})
}

// closingReady is an inner service that is never ready now, and whose
// readiness probe, the second time it is asked, closes b. It counts the
// probes, and the waits in Ready, which it fails.
type closingReady struct {
	svc
	b             *buffer.Buffer[string, string]
	probes, waits int
}

func (s *closingReady) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() == nil {
		s.waits++
		return permit{}, errFoobar
	}
	s.probes++
	if s.probes == 2 {
		s.b.Close()
	}
	return permit{}, ctx.Err()
}

// A Buffer closed by the inner service's readiness probe in a request's
// turn, just before the request would wait in the inner Ready: the request
// gets ErrClosed without waiting there, whatever its context, one that is
// context.Background, one that never ends, or one that may.
func TestCloseBeforeTurnWaits(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  func(t *testing.T) context.Context
	}{
		{"Background", func(*testing.T) context.Context { return context.Background() }},
		{"NeverDone", func(*testing.T) context.Context { return context.WithValue(context.Background(), closingReady{}, 1) }},
		{"Cancellable", func(t *testing.T) context.Context { return t.Context() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := towertest.NewMock[string, string]()
			inner := &closingReady{svc: m}
			inner.b = buffer.New[string, string](inner, 1)
			_, err := tower.Call(tt.ctx(t), inner.b, "req")
			if !errors.Is(err, buffer.ErrClosed) {
				t.Errorf("Call: got %v, want %v", err, buffer.ErrClosed)
			}
			if inner.probes != 2 || inner.waits != 0 {
				t.Errorf("inner service probed %d times and waited in %d times, want 2 and 0", inner.probes, inner.waits)
			}
		})
	}
}
