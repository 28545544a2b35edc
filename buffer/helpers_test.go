package buffer_test

import (
	"errors"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	permit = tower.Permit[string, string]
	mock   = towertest.Handle[string, string]
)

func newBuffer(t *testing.T, bound int) (*buffer.Buffer[string, string], *mock) {
	m, h := towertest.NewMock[string, string]()
	b := buffer.New[string, string](m, bound)
	t.Cleanup(func() { b.Close() })
	return b, h
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
