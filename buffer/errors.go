package buffer

// ErrClosed is the error of every Ready and Call on a Buffer after Close,
// and of requests still queued when it closed. Its message is tower's. Its
// method Unavailable answers true (see [tower.IsUnavailable]): a closed
// Buffer takes no more requests.
var ErrClosed error = closed{}

type closed struct{}

func (closed) Error() string     { return "buffer's worker closed unexpectedly" }
func (closed) Unavailable() bool { return true }

// A ServiceError is the error every caller of a Buffer gets once its inner
// service failed, one shared by all. errors.Is and errors.As reach the
// inner service's error through it.
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
