package buffer

// ErrClosed is the error of every Ready and Call on a Buffer after Close,
// and of requests still queued when it closed. Its message is tower's. It
// answers [tower.IsUnavailable].
var ErrClosed error = closed{}

type closed struct{}

func (closed) Error() string     { return "buffer's worker closed unexpectedly" }
func (closed) Unavailable() bool { return true }

// A ServiceError is the error every caller of a Buffer gets once the inner
// service's Ready failed or panicked: the Buffer fails for good, and every
// request in it, and every later one, gets the one ServiceError, wrapping
// a [*tower.PanicError] for a panic. errors.Is and errors.As reach the
// inner service's error through it. The panic, or a runtime.Goexit, goes
// on up to the caller it happened on once its slot and turn are given
// back. A panic in the inner service's Call goes on up to its caller and
// breaks nothing.
type ServiceError struct {
	cause error
}

// Error returns "buffered service failed: " and the inner service's error.
func (e *ServiceError) Error() string { return "buffered service failed: " + e.cause.Error() }

// Unwrap returns the inner service's error.
func (e *ServiceError) Unwrap() error { return e.cause }

// Unavailable reports true: the Buffer is broken for good, whatever its
// inner service failed with (see [tower.IsUnavailable]).
func (e *ServiceError) Unavailable() bool { return true }
