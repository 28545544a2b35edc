package steer

import (
	"errors"
	"fmt"
)

// ErrBadPick is the cause, in an [*Error], of a request whose picker
// returned an index that is not one of the services'.
var ErrBadPick = errors.New("picker returned an index out of range")

// An Error reports a request that could not be sent to the service its
// picker chose: the picked Index was out of range (Err is [ErrBadPick]), or
// that service is broken (Err is the error its Ready returned, and every
// request picked for it gets the same *Error). Match it with errors.As, and
// its cause with errors.Is.
type Error struct {
	Index int   // the index the picker returned
	Err   error // the cause
}

// Error returns "steer: service <Index>: <Err>".
func (e *Error) Error() string { return fmt.Sprintf("steer: service %d: %v", e.Index, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
