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
// stack is broken for good. Err is what Ready returned.
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
//     buffer.ErrClosed, balance.ErrNoEndpoints; a panic that broke the
//     whole stack included);
//   - 429 with Retry-After for [tower.IsThrottled] (limit's per-key
//     refusal, throttle.ErrThrottled), unless it is also one of the above;
//   - 503 without Retry-After for [tower.IsTimeout] and context.Canceled:
//     not 504, which proxies in front would take for their own timeout;
//   - 500 for a *tower.PanicError of the request's own code (the Handler
//     aborts the response instead), and for any other error.
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

// retryLater reports whether err says the server cannot take the request
// now: overload, throttling or unavailability.
func retryLater(err error) bool {
	return tower.IsOverloaded(err) || tower.IsUnavailable(err) || tower.IsThrottled(err)
}

// WriteError is the default error handler of a [Handler]: it answers with
// [StatusCode](err) and a one-line text body that leaves out err's details,
// which may be internal: "service overloaded", "too many requests",
// "request timed out", "service unavailable", "request body larger than N
// bytes", or the status text. It writes nothing when the request's context
// was cancelled: the client has gone. Headers already set, such as
// Retry-After, are kept.
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
		return http.StatusText(code)
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("request body larger than %d bytes", tooLarge.Limit)
	case tower.IsOverloaded(err):
		return "service overloaded"
	case code == http.StatusTooManyRequests:
		return "too many requests"
	case tower.IsTimeout(err):
		return "request timed out"
	case code == http.StatusServiceUnavailable:
		return "service unavailable"
	}
	return http.StatusText(code)
}

// Failure is a classifier of client results, for a circuit breaker or an
// outlier detector (package breaker, package balance): it reports whether
// res and err say that the backend failed. They do when:
//
//   - err is not nil, except context.Canceled (the caller gave up) and a
//     refusal by the client's own stack that never reached the backend
//     (tower.IsOverloaded, tower.IsThrottled). A failed connection, a
//     timeout and tower.IsUnavailable are failures;
//   - res is a 5xx, except 501 Not Implemented and 505 HTTP Version Not
//     Supported, which say what the server does not do. A 4xx is not.
func Failure(res *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !tower.IsOverloaded(err) && !tower.IsThrottled(err)
	}
	c := res.StatusCode
	return c >= 500 && c != http.StatusNotImplemented && c != http.StatusHTTPVersionNotSupported
}

// Accepted is a classifier of client results, for a client-side throttle
// (package throttle): it reports whether the backend did not refuse the
// request for overload. It did refuse with a 429 or a 503, which a
// [Handler] answers for a request it shed, and so did an error that
// answers tower.IsOverloaded, tower.IsThrottled or tower.IsUnavailable.
// Any other response or error, a 500 or a timeout among them, is an answer
// to a request the backend took.
func Accepted(res *http.Response, err error) bool {
	if err != nil {
		return !retryLater(err)
	}
	return res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable
}
