package tower_test

import (
	"errors"
	"io"
	"testing"

	"github.com/towergo/tower"
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
