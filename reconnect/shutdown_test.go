package reconnect_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// Shutdown bounds the wait for a connect whose maker ignores its ctx: it
// returns ctx's error when ctx ends, at 10ms, and Ready fails with
// ErrClosed from then on. The connect goes on, and closes the service it
// makes at 1s; Close waits for it until then. No goroutine is left
// (synctest checks it).
func TestShutdownBoundsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		made, _ := newClosable()
		maker := reconnect.MakeFunc[string, string, string](func(context.Context, string) (tower.Service[string, string], error) {
			time.Sleep(time.Second)
			return made, nil
		})
		r := reconnect.New(maker, target)
		start := time.Now()
		towertest.ReadyNow(t, r)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if err := r.Shutdown(ctx); err != context.DeadlineExceeded || time.Since(start) != 10*time.Millisecond {
			t.Errorf("Shutdown: got %v at %v, want %v at 10ms", err, time.Since(start), context.DeadlineExceeded)
		}
		if _, err := r.Ready(t.Context()); err != reconnect.ErrClosed {
			t.Errorf("Ready after Shutdown: got %v, want %v", err, reconnect.ErrClosed)
		}
		if made.isClosed() {
			t.Error("the service was closed before it was made")
		}
		if err := r.Close(); err != nil || time.Since(start) != time.Second {
			t.Errorf("Close: got %v at %v, want nil at 1s", err, time.Since(start))
		}
		if !made.isClosed() {
			t.Error("the service made after Shutdown was not closed")
		}
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown once everything has stopped: got %v, want nil, even with a done ctx", err)
		}
	})
}

// erringClose is a service whose Close fails.
type erringClose struct{ svc }

var errClose = errors.New("close failed")

func (erringClose) Close() error { return errClose }

// Shutdown, like Close, closes the current service and returns its Close
// error; once.
func TestShutdownReturnsCloseError(t *testing.T) {
	maker, _ := towertest.NewMock[string, svc]()
	inner, _ := towertest.NewMock[string, string]()
	r := reconnect.NewConnected[string, string, string](maker, target, erringClose{inner})
	if err := r.Shutdown(t.Context()); err != errClose {
		t.Errorf("Shutdown: got %v, want %v", err, errClose)
	}
	if err := r.Shutdown(t.Context()); err != nil {
		t.Errorf("a second Shutdown: got %v, want nil", err)
	}
}
