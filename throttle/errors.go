package throttle

import "github.com/towergo/tower"

// ErrThrottled is the error of a request the Throttle rejected itself,
// without sending it, because the backend has been refusing requests. Its
// message is "request throttled: backend overloaded".
//
// Its methods Overloaded and Throttled both answer true (see
// [tower.IsOverloaded] and [tower.IsThrottled]): this client has been
// sending more than the backend accepts, and the backend cannot take the
// request now. The adapters ask Overloaded first, so a server whose stack
// calls a backend through a Throttle answers its own client as for a
// backend that is overloaded, and not as for a client over its allowance,
// which the client is not: package towerhttp answers 503 with Retry-After
// ("service overloaded") rather than 429, and metrics.OutcomeOf says
// OutcomeShed. A
// Throttle further out (a client of that server, or of this stack) that
// uses [NotOverloaded] counts it as a refusal, which it is. A retry policy
// should not retry it at once: the request would most likely be rejected
// again, as the SRE book says of its "overloaded; don't retry".
var ErrThrottled error = throttled{}

type throttled struct{}

func (throttled) Error() string    { return "request throttled: backend overloaded" }
func (throttled) Overloaded() bool { return true }
func (throttled) Throttled() bool  { return true }

// NotOverloaded is a classifier for [New] that reads only the error: it
// reports that the backend accepted the request unless err says that it
// was refused for overload or throttling, or that the service takes no
// requests at all: [tower.IsOverloaded] (a LoadShed's ErrOverloaded, a
// Throttle's ErrThrottled), [tower.IsThrottled] or [tower.IsUnavailable]
// (a closed Buffer, a balancer with no endpoints). Any other error, a
// timeout among them, is the backend's answer to a request it took. It
// allocates nothing.
//
// A classifier that reads a protocol's status as well (HTTP 429 and 503,
// gRPC RESOURCE_EXHAUSTED and UNAVAILABLE) belongs with the protocol's
// adapter.
func NotOverloaded[Res any](_ Res, err error) bool {
	return err == nil || !(tower.IsOverloaded(err) || tower.IsThrottled(err) || tower.IsUnavailable(err))
}
