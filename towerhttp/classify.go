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
//   - err is not nil, except the caller's cancellation (context.Canceled:
//     the caller gave up, which tells nothing of the backend) and a
//     refusal by the client's own stack for overload or throttling (an
//     error that answers tower.IsOverloaded or tower.IsThrottled: a
//     LoadShed, a throttle; the request never reached the backend). A
//     connection that fails, a timeout (a slow backend is a failing one,
//     to its callers), an error that answers tower.IsUnavailable (the
//     backend's endpoint, or a breaker below, takes nothing) are failures;
//   - res is a 5xx, except 501 Not Implemented and 505 HTTP Version Not
//     Supported, which say what the server does not do, not how it is.
//     A 503 is a failure: a backend that sheds cannot serve.
//
// A 4xx, 429 included, is the caller's request refused, not the backend
// failing. It allocates nothing.
func Failure(res *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !tower.IsOverloaded(err) && !tower.IsThrottled(err)
	}
	c := res.StatusCode
	return c >= 500 && c != http.StatusNotImplemented && c != http.StatusHTTPVersionNotSupported
}

// Accepted is a classifier of client results, for a client-side throttle
// (package throttle): it reports whether the backend accepted the
// request, that is, did not refuse it for overload. It did not for a 429
// Too Many Requests or a 503 Service Unavailable, which a [Handler]
// answers for a request it shed, and for an error that answers
// tower.IsOverloaded, tower.IsThrottled or tower.IsUnavailable (a refusal
// of the client's own stack: a LoadShed, a throttle, a balancer without
// endpoints). Any other response or error, a 500 or a timeout among
// them, is the backend's answer to a request it took, as throttle's
// NotOverloaded counts errors. It allocates nothing.
func Accepted(res *http.Response, err error) bool {
	if err != nil {
		return !refused(err)
	}
	return res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable
}
