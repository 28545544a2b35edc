package tower_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

func TestPanicError(t *testing.T) {
	err := error(&tower.PanicError{Where: "the inner service's Ready, on a Buffer's worker", Value: io.ErrUnexpectedEOF, Stack: []byte("stack")})
	if got, want := err.Error(), "tower: panic in the inner service's Ready, on a Buffer's worker: unexpected EOF"; got != want {
		t.Errorf("got message %q, want %q", got, want)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not reach an error the code panicked with")
	}
	wrapped := errors.Join(errors.New("buffered service failed"), err)
	var pe *tower.PanicError
	if !errors.As(wrapped, &pe) || pe.Value != io.ErrUnexpectedEOF {
		t.Errorf("errors.As found %v, want the PanicError", pe)
	}

	notErr := &tower.PanicError{Where: "a Reconnect's maker", Value: 42}
	if got, want := notErr.Error(), "tower: panic in a Reconnect's maker: 42"; got != want {
		t.Errorf("got message %q, want %q", got, want)
	}
	if u := notErr.Unwrap(); u != nil {
		t.Errorf("Unwrap of a panic with a non-error value = %v, want nil", u)
	}
}

// unavailable is an error that says the service is down, wrapping err.
type unavailable struct{ err error }

func (u unavailable) Error() string     { return "down: " + u.err.Error() }
func (u unavailable) Unwrap() error     { return u.err }
func (u unavailable) Unavailable() bool { return true }

func TestRequestPanic(t *testing.T) {
	pe := &tower.PanicError{Where: "the handler", Value: "boom"}
	for _, c := range []struct {
		name string
		err  error
		want *tower.PanicError
	}{
		{"nil", nil, nil},
		{"no panic", io.EOF, nil},
		{"a panic", pe, pe},
		{"a panic, wrapped", fmt.Errorf("call: %w", pe), pe},
		{"a panic that broke the service", fmt.Errorf("call: %w", unavailable{pe}), nil},
		{"a panic beside an unavailable service", errors.Join(unavailable{io.EOF}, pe), pe},
	} {
		if got := tower.RequestPanic(c.err); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// A panic in a Buffer's inner Ready breaks the Buffer: every later caller
// gets it wrapped in the Buffer's failure, which is no request's own.
func TestRequestPanicBrokenBuffer(t *testing.T) {
	m, h := towertest.NewMock[int, int]()
	h.PanicReady("boom")
	buf := buffer.New[int, int](m, 1)
	defer buf.Close()
	func() {
		defer func() { recover() }() // the first caller gets the panic itself
		tower.Call[int, int](t.Context(), buf, 1)
	}()
	_, _, err := tower.ReadyNow[int, int](buf)
	if _, ok := errors.AsType[*tower.PanicError](err); !ok {
		t.Fatalf("ReadyNow of a Buffer whose inner Ready panicked: got %v, want a PanicError", err)
	}
	if pe := tower.RequestPanic(err); pe != nil {
		t.Errorf("RequestPanic(%v) = %v, want nil: the panic broke the Buffer", err, pe)
	}
}
