package towerhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/towergo/tower"
)

// A ReadyError is the error a [Handler] gives its error handler when the
// stack's Ready failed with an error other than the request context's: the
// stack is broken for good, and every request will fail the same way until
// it is rebuilt. Err is what Ready returned.
type ReadyError struct {
	Err error
}

// Error returns "service not ready: " and Ready's error.
func (e *ReadyError) Error() string { return "service not ready: " + e.Err.Error() }

// Unwrap returns Ready's error.
func (e *ReadyError) Unwrap() error { return e.Err }

// Unavailable reports true: a stack whose Ready failed takes no request
// (see [tower.IsUnavailable]).
func (e *ReadyError) Unavailable() bool { return true }

// ErrTooManyHosts is the error of a request through a [Transport] that
// already keeps a stack for as many hosts as its limit allows, all of
// them with requests in flight (see [WithMaxHosts]).
var ErrTooManyHosts = errors.New("towerhttp: too many hosts with requests in flight")

// StatusCode returns the status a [Handler] answers with when its stack
// fails with err. It asks err through package tower's predicates, so an
// error of one's own middleware with the same methods is answered alike:
//
//   - 413 for a body over [WithMaxBodyBytes] (*http.MaxBytesError);
//   - 503 with Retry-After ([WithRetryAfter]) for [tower.IsOverloaded]
//     (loadshed.ErrOverloaded) and [tower.IsUnavailable] ([*ReadyError],
//     buffer.ErrClosed, *buffer.ServiceError, balance.ErrNoEndpoints,
//     balance.ErrClosed; a panic that broke the whole stack included);
//   - 429 with Retry-After for [tower.IsThrottled] (limit's per-key
//     refusal, throttle.ErrThrottled), unless it is also one of the above;
//   - 503 without Retry-After for [tower.IsTimeout] (timeout.ErrElapsed,
//     or context.DeadlineExceeded from outside) and for context.Canceled;
//   - 500 for a *tower.PanicError of the request's own code, whatever its
//     value (the Handler aborts the response instead: see
//     [Handler.ServeHTTP]), and for any other error. StatusCode(nil) is 200.
//
// A timeout is 503, as http.TimeoutHandler answers, not 504: proxies in
// front would read a 504 from the origin as their own timeout. A handler
// that is itself a proxy may map timeout.ErrElapsed to 504 in its error
// handler.
func StatusCode(err error) int {
	if err == nil {
		return http.StatusOK
	}
	if requestPanic(err) != nil {
		return http.StatusInternalServerError
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case tower.IsOverloaded(err), tower.IsUnavailable(err):
		return http.StatusServiceUnavailable
	case tower.IsThrottled(err):
		return http.StatusTooManyRequests
	case tower.IsTimeout(err), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// retryLater reports whether err is a layer's refusal for overload,
// throttling or unavailability: the server cannot take the request now,
// and says so with Retry-After.
func retryLater(err error) bool {
	return tower.IsOverloaded(err) || tower.IsUnavailable(err) || tower.IsThrottled(err)
}

// WriteError is the default error handler of a [Handler]: it answers with
// [StatusCode](err) and a one-line text body that leaves out err's details,
// which may be internal: "service overloaded", "too many requests",
// "request timed out", "service unavailable", "request body larger than N
// bytes", or the status text. It writes nothing when the request's context
// was cancelled: the client has gone. Headers already set, such as
// Retry-After, are kept; Content-Length and Content-Type are replaced, as
// http.Error does.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled) {
		return
	}
	code := StatusCode(err)
	http.Error(w, message(err, code), code)
}

// message is the body WriteError writes for err.
func message(err error, code int) string {
	if code == http.StatusInternalServerError {
		return http.StatusText(code)
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return fmt.Sprintf("request body larger than %d bytes", tooLarge.Limit)
	}
	if tower.IsOverloaded(err) {
		return "service overloaded"
	}
	if code == http.StatusTooManyRequests {
		return "too many requests"
	}
	if tower.IsTimeout(err) {
		return "request timed out"
	}
	if code == http.StatusServiceUnavailable {
		return "service unavailable"
	}
	return http.StatusText(code)
}
