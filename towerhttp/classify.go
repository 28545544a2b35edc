package towerhttp

import (
	"context"
	"errors"
	"net/http"

	"github.com/towergo/tower"
)

// Failure is a classifier of client results, for a circuit breaker or an
// outlier detector (package breaker, package balance): it reports whether
// res and err say that the backend failed. They do when:
//
//   - err is not nil, except context.Canceled (the caller gave up) and a
//     refusal by the client's own stack that never reached the backend
//     (tower.IsOverloaded, tower.IsThrottled). A failed connection, a
//     timeout (a slow backend fails its callers) and tower.IsUnavailable
//     (the endpoint, or a breaker below, takes nothing) are failures;
//   - res is a 5xx, 503 included, except 501 Not Implemented and 505 HTTP
//     Version Not Supported, which say what the server does not do.
//
// A 4xx, 429 included, is the caller's request refused, not the backend
// failing.
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
// [Handler] answers for a request it shed; an error that answers
// tower.IsOverloaded, tower.IsThrottled or tower.IsUnavailable (a LoadShed,
// a throttle, a balancer without endpoints in the client's own stack)
// counts as refused too. Any other response or error, a 500 or a timeout
// among them, is an answer to a request the backend took, as throttle's
// NotOverloaded counts errors.
func Accepted(res *http.Response, err error) bool {
	if err != nil {
		return !retryLater(err)
	}
	return res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable
}
