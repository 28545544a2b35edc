package towergrpc

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
)

// A statusError is a gRPC status that keeps the error it was made from:
// status.Code finds the status, and errors.Is and errors.As the error.
type statusError struct {
	st  *status.Status
	err error
}

// Error reads as grpc's own status errors do.
func (e *statusError) Error() string {
	return "rpc error: code = " + e.st.Code().String() + " desc = " + e.st.Message()
}

func (e *statusError) GRPCStatus() *status.Status { return e.st }

func (e *statusError) Unwrap() error { return e.err }

func newStatusError(c codes.Code, err error) *statusError {
	return &statusError{st: status.New(c, err.Error()), err: err}
}

// The statuses of the context's errors are made once, those of refusals
// cached: mapping them allocates nothing. A status is never changed, so
// sharing one is safe.
var (
	errCanceled = newStatusError(codes.Canceled, context.Canceled)
	errDeadline = newStatusError(codes.DeadlineExceeded, context.DeadlineExceeded)

	overloadedStatus  = statusCache{code: codes.ResourceExhausted}
	throttledStatus   = statusCache{code: codes.ResourceExhausted}
	timeoutStatus     = statusCache{code: codes.DeadlineExceeded}
	unavailableStatus = statusCache{code: codes.Unavailable}
)

// readyError maps an error of the stack's Ready, as the package doc says.
func readyError(ctx context.Context, err error) error {
	if err == context.Canceled && ctx.Err() == err {
		return errCanceled
	}
	if err == context.DeadlineExceeded && ctx.Err() == err {
		return errDeadline
	}
	if isStatus(err) && !panicked(err) {
		return err
	}
	return unavailableStatus.of(err)
}

// callError maps an error of the stack's call, as the package doc says.
func callError(err error) error {
	switch err { // without walking a chain of wrapped errors
	case nil:
		return nil
	case context.Canceled:
		return errCanceled
	case context.DeadlineExceeded:
		return errDeadline
	}
	switch {
	case tower.RequestPanic(err) != nil:
		return newStatusError(codes.Internal, err)
	case isStatus(err):
		return err
	case tower.IsOverloaded(err):
		return overloadedStatus.of(err)
	case tower.IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded):
		// A layer's timeout, even one an unavailable service's error
		// wraps; a context's deadline there is the service's failure.
		return timeoutStatus.of(err)
	case tower.IsUnavailable(err):
		return unavailableStatus.of(err)
	case tower.IsThrottled(err):
		return throttledStatus.of(err)
	case tower.IsTimeout(err):
		return timeoutStatus.of(err)
	case errors.Is(err, context.Canceled):
		return newStatusError(codes.Canceled, err)
	}
	return err
}

// panicked reports whether err is, or wraps, a *tower.PanicError.
func panicked(err error) bool {
	_, ok := errors.AsType[*tower.PanicError](err)
	return ok
}

// isStatus reports whether err is, or wraps, a gRPC status error.
func isStatus(err error) bool {
	_, ok := errors.AsType[grpcStatus](err)
	return ok
}

// grpcStatus is an error that carries a gRPC status.
type grpcStatus interface {
	error
	GRPCStatus() *status.Status
}

// A statusCache keeps the status error made for the last error of one
// kind, for the next request refused with the same (mostly a sentinel).
type statusCache struct {
	code codes.Code
	last atomic.Pointer[statusError]
}

// of returns the status error of err. The cached one serves for the same
// error with the same message (a pointer's may have changed); one whose
// type cannot be compared never does, as comparing it would panic.
func (c *statusCache) of(err error) error {
	if s := c.last.Load(); s != nil && reflect.TypeOf(err).Comparable() && s.err == err && s.err.Error() == err.Error() {
		return s
	}
	s := newStatusError(c.code, err)
	c.last.Store(s)
	return s
}
