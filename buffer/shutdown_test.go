package buffer_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// deafReady is an inner service that is not ready now, and whose Ready,
// once the worker waits in it, ignores its context: it returns only when
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

// The worker waits in an inner Ready that ignores its context for
// 1s. Shutdown with a 10ms context returns context.DeadlineExceeded at
// 10ms; the caller got ErrClosed at once. At 1s the inner Ready returns,
// and the worker releases the permit it got and exits (the bubble fails if
// it is left); a Close then returns at once, and so does a Shutdown, with
// nil.
func TestShutdownDeadline(t *testing.T) {
	for _, st := range stoppers {
		t.Run(st.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				h.Allow(0)
				s, shutdown, closeIt := st.make(&deafReady{svc: m})
				start := time.Now()
				time.AfterFunc(time.Second, func() { h.Allow(1) })
				call := goCall(t.Context(), mustReady(t, s), "hello")

				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				if err := shutdown(ctx); err != context.DeadlineExceeded {
					t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
				}
				if got := time.Since(start); got != 10*time.Millisecond {
					t.Errorf("Shutdown returned after %v, want 10ms", got)
				}
				wantError(t, call, buffer.ErrClosed)

				if err := closeIt(); err != nil {
					t.Errorf("Close: got %v, want nil", err)
				}
				if got := time.Since(start); got != time.Second {
					t.Errorf("Close returned after %v, want 1s, when the worker exits", got)
				}
				if err := shutdown(t.Context()); err != nil {
					t.Errorf("Shutdown after the worker exited: got %v, want nil", err)
				}
				synctest.Wait()
				if n, o := h.Calls(), h.Outstanding(); n != 0 || o != 0 {
					t.Errorf("the inner service got %d calls with %d reservations outstanding, want 0 and 0", n, o)
				}
			})
		})
	}
}

// Shutdown of an idle Buffer, or of one whose worker waits in an inner
// Ready that heeds its context, returns nil as soon as the worker exits,
// before its context ends.
func TestShutdownReturnsWhenStopped(t *testing.T) {
	for _, st := range stoppers {
		t.Run(st.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				h.Allow(0)
				s, shutdown, _ := st.make(m)
				call := goCall(t.Context(), mustReady(t, s), "hello")
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				if err := shutdown(ctx); err != nil || time.Since(start) != 0 {
					t.Errorf("Shutdown: got %v after %v, want nil at once", err, time.Since(start))
				}
				wantError(t, call, buffer.ErrClosed)
				if n := h.Outstanding(); n != 0 {
					t.Errorf("the inner service has %d reservations outstanding, want 0", n)
				}
			})
		})
	}
}

// The inner Ready panics on the worker after Shutdown gave up waiting for
// it: every caller has had ErrClosed, so no caller is left to hear of the
// panic; the process lives on, the panic is logged, and ErrClosed stands.
func TestPanicAfterShutdownIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := towertest.CaptureLog(t)

		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		inner := &deafReady{svc: m, panicNow: make(chan struct{}), v: errors.New("late bug")}
		b := buffer.New[string, string](inner, 1)
		call := goCall(t.Context(), mustReady(t, b), "hello")
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if err := b.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
		}
		wantError(t, call, buffer.ErrClosed)
		close(inner.panicNow)
		b.Close() // the worker exits
		for _, want := range []string{"level=ERROR", `where="` + buffer.ReadyOnWorker + `"`, `panic="late bug"`} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log lacks %s:\n%s", want, log.String())
			}
		}
		if _, err := b.Ready(t.Context()); err != buffer.ErrClosed {
			t.Errorf("Ready: got %v, want %v", err, buffer.ErrClosed)
		}
	})
}
