package tower

import (
	"errors"
	"fmt"
)

// A PanicError is a panic in user code that ran on a goroutine this module
// started (an inner Ready on a Buffer's worker, an abandoned call of a
// Timeout, a Reconnect's maker), recovered and handed as an error to the
// callers it concerns, as the failure it stands for: after a panic in an
// inner Ready, a Buffer is broken for good and every later caller gets the
// same PanicError, wrapped. Reach it with errors.As; errors.Is reaches the
// panic value when it is an error.
type PanicError struct {
	// Where says what panicked and on which goroutine, such as "the inner
	// service's Ready, on a Buffer's worker".
	Where string
	// Value is what the code panicked with, or, for code that ended its
	// goroutine with runtime.Goexit, an error that says so.
	Value any
	// Stack is the panicking goroutine's stack, as runtime/debug.Stack
	// formats it at recovery.
	Stack []byte
}

// Error returns "tower: panic in ", where it happened, and the panic value.
// The stack is in Stack, not in the message.
func (e *PanicError) Error() string { return fmt.Sprintf("tower: panic in %s: %v", e.Where, e.Value) }

// Unwrap returns the panic value if it is an error, and nil otherwise.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// RequestPanic returns the *PanicError err carries for a panic of the
// request's own, and nil if err carries none, or carries one that broke the
// whole service: wrapped by an error that says the service is unavailable,
// as a Buffer's after a panic in its inner Ready. An adapter answers the
// first as the request's failure and the second as the service being down.
func RequestPanic(err error) *PanicError {
	pe, ok := errors.AsType[*PanicError](err)
	if !ok {
		return nil
	}
	if u, ok := errors.AsType[unavailableError](err); ok && u.Unavailable() && errors.Is(u, pe) {
		return nil
	}
	return pe
}
