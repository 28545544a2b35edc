package buffer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	permit = tower.Permit[string, string]
	mock   = towertest.Handle[string, string]
)

// goCall calls p on a goroutine of its own and waits until that goroutine
// is blocked, so that requests are queued in the order they are started.
func goCall(ctx context.Context, p permit, req string) *towertest.Outcome[string] {
	o := towertest.Go(func() (string, error) { return p.Call(ctx, req) })
	synctest.Wait()
	return o
}

// goReady runs Ready on a goroutine of its own and waits until that
// goroutine is blocked or done.
func goReady(ctx context.Context, s svc) *towertest.Outcome[permit] {
	o := towertest.Go(func() (permit, error) { return s.Ready(ctx) })
	synctest.Wait()
	return o
}

func newBuffer(t *testing.T, bound int) (*buffer.Buffer[string, string], *mock) {
	m, h := towertest.NewMock[string, string]()
	b := buffer.New[string, string](m, bound)
	t.Cleanup(func() { b.Close() })
	return b, h
}

func mustReady(t *testing.T, s svc) permit {
	t.Helper()
	p, err := s.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: got error %v, want a permit", err)
	}
	return p
}

// next returns the request the mock must have received by now, and fails t
// unless it is want.
func next(t *testing.T, h *mock, want string) *towertest.Request[string, string] {
	t.Helper()
	synctest.Wait()
	return h.ExpectNow(t, want)
}

// nothingNext fails t if the mock has received a request.
func nothingNext(t *testing.T, h *mock) {
	t.Helper()
	synctest.Wait()
	h.ExpectNone(t)
}

func wantResult(t *testing.T, o *towertest.Outcome[string], want string) {
	t.Helper()
	if res, err := o.Wait(); res != want || err != nil {
		t.Errorf("got %q, %v; want %q, nil", res, err, want)
	}
}

func wantError[T any](t *testing.T, o *towertest.Outcome[T], want error) {
	t.Helper()
	if _, err := o.Wait(); err != want {
		t.Errorf("got error %v, want %v", err, want)
	}
}

// wantServiceError fails t unless err is a *buffer.ServiceError for
// errFoobar, and returns it.
func wantServiceError(t *testing.T, err error) *buffer.ServiceError {
	t.Helper()
	var se *buffer.ServiceError
	if !errors.As(err, &se) {
		t.Fatalf("got error %v (%T), want a *buffer.ServiceError", err, err)
	}
	if got, want := se.Error(), "buffered service failed: foobar"; got != want {
		t.Errorf("got message %q, want %q", got, want)
	}
	if !errors.Is(err, errFoobar) {
		t.Errorf("errors.Is(%v, errFoobar) = false, want true", err)
	}
	var fe *foobarError
	if !errors.As(err, &fe) || fe != errFoobar {
		t.Errorf("errors.As did not reach the inner service's *foobarError through %v", err)
	}
	return se
}

type foobarError struct{}

func (*foobarError) Error() string { return "foobar" }

var errFoobar = &foobarError{}
