package towerhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/towergo/tower"
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

// Unavailable reports true: a stack whose Ready failed takes no request
// (see [tower.IsUnavailable]).
func (e *ReadyError) Unavailable() bool { return true }

// ErrTooManyHosts is the error of a request through a [Transport] that
// already keeps a stack for as many hosts as its limit allows, all of
// them with requests in flight (see [WithMaxHosts]).
var ErrTooManyHosts = errors.New("towerhttp: too many hosts with requests in flight")

// StatusCode returns the status code a [Handler] answers a request with
// when its stack fails with err. It asks err what it is, through the
// functions of package tower, so that an error of a user's own middleware
// with the same method is answered as the library's are:
//
//   - 413 Request Entity Too Large for a body over the limit
//     (*http.MaxBytesError, see [WithMaxBodyBytes]);
//   - 503 Service Unavailable for a request the service could not take
//     now ([tower.IsOverloaded]: loadshed.ErrOverloaded) and for a service
//     that takes none ([tower.IsUnavailable]: a stack that is not ready,
//     [*ReadyError]; a closed or failed buffer, buffer.ErrClosed and
//     *buffer.ServiceError; a balancer without endpoints or closed,
//     balance.ErrNoEndpoints and balance.ErrClosed): the server cannot
//     take the request now, and says when to try again with Retry-After
//     (see [WithRetryAfter]);
//   - 429 Too Many Requests, with Retry-After, for a caller over its
//     allowance ([tower.IsThrottled]: limit's per-key refusal, whose
//     Retry-After is the time until the key's next token, and
//     throttle.ErrThrottled; one that answers one of the two above as well
//     is 503);
//   - 503 Service Unavailable, without Retry-After, for a request that
//     timed out ([tower.IsTimeout]: timeout.ErrElapsed, or
//     context.DeadlineExceeded from a deadline set outside the Handler),
//     as http.TimeoutHandler answers; the package doc says why not 504;
//   - 503 Service Unavailable for context.Canceled;
//   - 500 Internal Server Error for a *tower.PanicError, a panic in user
//     code that a layer recovered on a goroutine of its own, whatever the
//     panic value: a panic is a bug, not something a client did (a
//     Handler does not answer it, but aborts the response: see the
//     package doc). A panic that broke the whole stack, which an error
//     that answers [tower.IsUnavailable] wraps (a [ReadyError], a failed
//     Buffer), is 503 as above;
//   - 500 Internal Server Error for any other error.
//
// StatusCode(nil) is 200.
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

// retryLater reports whether err says that the server cannot take the
// request now: the errors that come with Retry-After.
func retryLater(err error) bool {
	return tower.IsOverloaded(err) || tower.IsUnavailable(err) || tower.IsThrottled(err)
}

// WriteError is the default error handler of a [Handler]: it answers the
// request with [StatusCode](err) and a one-line text body that says what
// happened without the details of err, which may be internal:
// "service overloaded", "too many requests", "request timed out",
// "service unavailable", "request body larger than N bytes", or the status
// text. It writes nothing when the request's context was cancelled, since
// the client has gone. Headers already set, such as Retry-After, are kept, but
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
