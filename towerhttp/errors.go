package towerhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
)

// A ReadyError is the error a [Handler] gives its error handler when the
// stack's Ready failed with an error that is not the request's context's:
// the stack is broken for good (see package tower), and every request
// will fail the same way until it is rebuilt. Err is what Ready returned.
type ReadyError struct {
	Err error
}

// Error returns "service not ready: " and Ready's error.
func (e *ReadyError) Error() string { return "service not ready: " + e.Err.Error() }

// Unwrap returns Ready's error.
func (e *ReadyError) Unwrap() error { return e.Err }

// ErrTooManyHosts is the error of a request through a [Transport] that
// already keeps a stack for as many hosts as its limit allows, all of
// them with requests in flight (see [WithMaxHosts]).
var ErrTooManyHosts = errors.New("towerhttp: too many hosts with requests in flight")

// StatusCode returns the status code a [Handler] answers a request with
// when its stack fails with err:
//
//   - 413 Request Entity Too Large for a body over the limit
//     (*http.MaxBytesError, see [WithMaxBodyBytes]);
//   - 503 Service Unavailable for a request shed (loadshed.ErrOverloaded),
//     a stack that is not ready ([*ReadyError]), a closed or failed buffer
//     (buffer.ErrClosed, *buffer.ServiceError) and a balancer without
//     endpoints (balance.ErrNoEndpoints, balance.ErrClosed): the server
//     cannot take the request now, and says when to try again with
//     Retry-After (see [WithRetryAfter]);
//   - 503 Service Unavailable, without Retry-After, for a request that
//     timed out (timeout.ErrElapsed, or context.DeadlineExceeded from a
//     deadline set outside the Handler), as http.TimeoutHandler answers;
//     the package doc says why not 504;
//   - 503 Service Unavailable for context.Canceled;
//   - 500 Internal Server Error for a *tower.PanicError, a panic in user
//     code that a layer recovered on a goroutine of its own, whatever the
//     panic value: a panic is a bug, not something a client did (a
//     Handler does not answer it, but aborts the response: see the
//     package doc). A panic that broke the whole stack, which a
//     [ReadyError] or a failed Buffer wraps, is 503 as above;
//   - 500 Internal Server Error for any other error.
//
// StatusCode(nil) is 200.
func StatusCode(err error) int {
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return http.StatusOK
	case requestPanic(err) != nil:
		return http.StatusInternalServerError
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case unavailable(err), timedOut(err), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// unavailable reports whether err says that the server cannot take the
// request now: the errors that come with Retry-After.
func unavailable(err error) bool {
	var (
		notReady *ReadyError
		failed   *buffer.ServiceError
	)
	return errors.Is(err, loadshed.ErrOverloaded) ||
		errors.As(err, &notReady) ||
		errors.Is(err, buffer.ErrClosed) ||
		errors.As(err, &failed) ||
		errors.Is(err, balance.ErrNoEndpoints) ||
		errors.Is(err, balance.ErrClosed)
}

func timedOut(err error) bool {
	return errors.Is(err, timeout.ErrElapsed) || errors.Is(err, context.DeadlineExceeded)
}

// WriteError is the default error handler of a [Handler]: it answers the
// request with [StatusCode](err) and a one-line text body that says what
// happened without the details of err, which may be internal:
// "service overloaded", "request timed out", "service unavailable",
// "request body larger than N bytes", or the status text. It writes
// nothing when the request's context was cancelled, since the client has
// gone. Headers already set, such as Retry-After, are kept, but
// Content-Length and Content-Type are replaced, as http.Error does.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled) {
		return
	}
	code := StatusCode(err)
	http.Error(w, message(err, code), code)
}

// message is the body WriteError writes for err.
func message(err error, code int) string {
	var tooLarge *http.MaxBytesError
	switch {
	case code == http.StatusInternalServerError:
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("request body larger than %d bytes", tooLarge.Limit)
	case errors.Is(err, loadshed.ErrOverloaded):
		return loadshed.ErrOverloaded.Error()
	case timedOut(err):
		return timeout.ErrElapsed.Error()
	case code == http.StatusServiceUnavailable:
		return "service unavailable"
	}
	return http.StatusText(code)
}
