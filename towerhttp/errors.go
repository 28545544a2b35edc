package towerhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/towergo/tower"
)

// A ReadyError is the error a [Handler] gives its error handler when the
// stack's Ready failed with an error other than the request context's.
type ReadyError struct {
	Err error
}

// Error returns "service not ready: " and Ready's error.
func (e *ReadyError) Error() string { return "service not ready: " + e.Err.Error() }

// Unwrap returns Ready's error.
func (e *ReadyError) Unwrap() error { return e.Err }

// Unavailable reports true (see [tower.IsUnavailable]).
func (e *ReadyError) Unavailable() bool { return true }

// ErrTooManyHosts is the error of a request through a [Transport] that
// already keeps a stack for as many hosts as its limit allows, all of
// them with requests in flight (see [WithMaxHosts]).
var ErrTooManyHosts = errors.New("towerhttp: too many hosts with requests in flight")

// StatusCode returns the status a [Handler] answers with when its stack
// fails with err, asking err through package tower's predicates:
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
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return http.StatusOK
	case tower.RequestPanic(err) != nil:
		return http.StatusInternalServerError
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
// now.
func retryLater(err error) bool {
	return tower.IsOverloaded(err) || tower.IsUnavailable(err) || tower.IsThrottled(err)
}

// WriteError is the default error handler of a [Handler]: it answers with
// [StatusCode](err) and a one-line text body without err's details, which
// may be internal. It writes nothing when the request's context was
// cancelled: the client has gone.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled) {
		return
	}
	code := StatusCode(err)
	msg := http.StatusText(code)
	var tooLarge *http.MaxBytesError
	switch {
	case code == http.StatusInternalServerError: // the status text, whatever err carries
	case errors.As(err, &tooLarge):
		msg = fmt.Sprintf("request body larger than %d bytes", tooLarge.Limit)
	case tower.IsOverloaded(err):
		msg = "service overloaded"
	case code == http.StatusTooManyRequests:
		msg = "too many requests"
	case tower.IsTimeout(err):
		msg = "request timed out"
	case code == http.StatusServiceUnavailable:
		msg = "service unavailable"
	}
	http.Error(w, msg, code)
}

// Failure is a classifier of client results, for a circuit breaker or an
// outlier detector: it reports whether the backend failed, as when:
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
// (package throttle): it reports false for a refusal, a 429 or a 503 (as a
// [Handler] answers a request it shed) or an error that answers
// tower.IsOverloaded, tower.IsThrottled or tower.IsUnavailable, and true
// for any other response or error, a 500 or a timeout among them.
func Accepted(res *http.Response, err error) bool {
	if err != nil {
		return !retryLater(err)
	}
	return res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable
}
