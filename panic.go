package tower

import "fmt"

// A PanicError is a panic in user code that ran on a goroutine this module
// started, recovered and handed as an error to the callers it concerns:
// the Ready of an inner service on a Buffer's worker, the Call of an
// abandoned call in a Timeout's Abandon mode, a maker on a Reconnect's
// connect goroutine, and so on. A panic on the caller's own goroutine is
// not turned into a PanicError: it goes on up to the caller, as any panic
// does, once the middleware it crosses have given back what they held.
//
// A middleware that meets a PanicError where the contract speaks of a
// failure treats it as one: a panic in an inner service's Ready is that
// service failing its readiness, so a Buffer over it is broken for good
// and every later caller gets the same PanicError, wrapped in the Buffer's
// error. Reach it with errors.As; errors.Is reaches the panic value
// through it when that value is an error.
type PanicError struct {
	// Where says what panicked and on which goroutine, such as "the inner
	// service's Ready, on a Buffer's worker".
	Where string
	// Value is what the code panicked with. For code that ended its
	// goroutine with runtime.Goexit, which cannot be recovered, it is an
	// error that says so.
	Value any
	// Stack is the stack of the goroutine that panicked, as
	// runtime/debug.Stack formats it, taken when the panic was recovered:
	// it shows where the panic was raised.
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
