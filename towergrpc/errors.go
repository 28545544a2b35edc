package towergrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
)

// A statusError is a gRPC status that keeps the error it was made from:
// status.FromError and status.Code find the status, and errors.Is and
// errors.As find the original error, so a client can test for
// loadshed.ErrOverloaded as well as for codes.ResourceExhausted.
type statusError struct {
	st  *status.Status
	err error
}

// Error reads as grpc's own status errors do.
func (e *statusError) Error() string {
	return "rpc error: code = " + e.st.Code().String() + " desc = " + e.st.Message()
}

// GRPCStatus returns the status; grpc's status package looks for it.
func (e *statusError) GRPCStatus() *status.Status { return e.st }

// Unwrap returns the error the status was made from.
func (e *statusError) Unwrap() error { return e.err }

func newStatusError(c codes.Code, err error) *statusError {
	return &statusError{st: status.New(c, err.Error()), err: err}
}

// The statuses of the bare sentinels are made once, so that shedding a
// request or timing it out allocates nothing for its error. A status is not
// changed once made, so sharing one is safe.
var (
	errOverloaded = newStatusError(codes.ResourceExhausted, loadshed.ErrOverloaded)
	errElapsed    = newStatusError(codes.DeadlineExceeded, timeout.ErrElapsed)
	errClosed     = newStatusError(codes.Unavailable, buffer.ErrClosed)
	errCanceled   = newStatusError(codes.Canceled, context.Canceled)
	errDeadline   = newStatusError(codes.DeadlineExceeded, context.DeadlineExceeded)
)

// readyError returns the error an RPC fails with when the stack's Ready
// failed with err, ctx being the context Ready was given. The caller's own
// context ending is reported as grpc reports it; a status error passes
// through unchanged; any other error means the stack is broken for good
// (see package tower), and is codes.Unavailable, a panic in the stack's
// readiness included (a *tower.PanicError, even one whose value is a
// status).
func readyError(ctx context.Context, err error) error {
	switch {
	case err == context.Canceled && ctx.Err() == err:
		return errCanceled
	case err == context.DeadlineExceeded && ctx.Err() == err:
		return errDeadline
	case isStatus(err) && !panicked(err):
		return err
	case err == buffer.ErrClosed:
		return errClosed
	}
	return newStatusError(codes.Unavailable, err)
}

// callError returns the error an RPC fails with when the stack's call
// failed with err: see the table in the package doc. A panic recovered on
// a goroutine of a layer's is codes.Internal, whatever its value, which
// may be an error with a code of its own. An error it does not know is
// returned unchanged, and a grpc server then sends it as codes.Unknown
// with its message, as it does any error a handler returns.
func callError(err error) error {
	switch err { // the common cases, without walking a chain of wrapped errors
	case nil:
		return nil
	case loadshed.ErrOverloaded:
		return errOverloaded
	case timeout.ErrElapsed:
		return errElapsed
	case buffer.ErrClosed:
		return errClosed
	case context.Canceled:
		return errCanceled
	case context.DeadlineExceeded:
		return errDeadline
	}
	var bufferFailed *buffer.ServiceError
	switch {
	case panicked(err) && !brokeBuffer(err):
		return newStatusError(codes.Internal, err)
	case isStatus(err):
		return err
	case errors.Is(err, loadshed.ErrOverloaded):
		return newStatusError(codes.ResourceExhausted, err)
	case errors.Is(err, timeout.ErrElapsed):
		return newStatusError(codes.DeadlineExceeded, err)
	case errors.Is(err, buffer.ErrClosed), errors.As(err, &bufferFailed):
		return newStatusError(codes.Unavailable, err)
	case errors.Is(err, context.DeadlineExceeded):
		return newStatusError(codes.DeadlineExceeded, err)
	case errors.Is(err, context.Canceled):
		return newStatusError(codes.Canceled, err)
	}
	return err
}

// panicked reports whether err is, or wraps, a *tower.PanicError: a panic
// in user code that a layer recovered on a goroutine of its own.
func panicked(err error) bool {
	var pe *tower.PanicError
	return errors.As(err, &pe)
}

// brokeBuffer reports whether err is a failed Buffer's error that wraps the
// panic err carries: the panic broke the Buffer's inner service, and every
// call fails the same way, as for any Buffer that failed.
func brokeBuffer(err error) bool {
	var (
		pe     *tower.PanicError
		failed *buffer.ServiceError
	)
	return errors.As(err, &pe) && errors.As(err, &failed) && errors.Is(failed.Unwrap(), pe)
}

// isStatus reports whether err is, or wraps, a gRPC status error.
func isStatus(err error) bool {
	var s interface{ GRPCStatus() *status.Status }
	return errors.As(err, &s)
}
