package throttle

import "github.com/towergo/tower"

// ErrThrottled is the error of a request the Throttle rejected itself,
// without sending it. It answers both [tower.IsOverloaded] and
// [tower.IsThrottled]; the adapters ask Overloaded first, so a server that
// calls its backend through a Throttle answers its own client as
// overloaded (503 in towerhttp, OutcomeShed in metrics), not as over its
// allowance. Do not retry it at once: it would most likely be rejected
// again.
var ErrThrottled error = throttled{}

type throttled struct{}

func (throttled) Error() string    { return "request throttled: backend overloaded" }
func (throttled) Overloaded() bool { return true }
func (throttled) Throttled() bool  { return true }

// NotOverloaded is a classifier for [New] that reads only the error: the
// backend accepted the request unless err answers [tower.IsOverloaded] (a
// LoadShed's ErrOverloaded, a Throttle's ErrThrottled),
// [tower.IsThrottled] or [tower.IsUnavailable] (a closed Buffer, a
// balancer with no endpoints). Any other error, a timeout among them, is
// the backend's answer to a request it took.
func NotOverloaded[Res any](_ Res, err error) bool {
	return err == nil || !(tower.IsOverloaded(err) || tower.IsThrottled(err) || tower.IsUnavailable(err))
}
