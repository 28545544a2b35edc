package metrics

import (
	"context"
	"errors"

	"github.com/towergo/tower"
)

// An Outcome says how a call ended: served, or turned away or failed, and
// why. It goes with each latency a Sink or RequestSink observes, so that
// served latencies are kept apart: a shed call is answered at once, and a
// p99 over both would say the service got faster as it shed more.
// [OutcomeOf] tells it from a call's error.
type Outcome uint8

const (
	// OutcomeServed is a call that returned without an error, whatever the
	// response says: an HTTP 500 a handler wrote is served.
	OutcomeServed    Outcome = iota + 1
	OutcomeError             // failed for any other reason ([OutcomeOf])
	OutcomeShed              // turned away: the service could not take it then
	OutcomeThrottled         // turned away: its caller was over its allowance
	OutcomeTimedOut          // ran out of time
	OutcomeCanceled          // its caller gave up
)

// NumOutcomes is one more than the largest Outcome, to size an array
// indexed by Outcome.
const NumOutcomes = int(OutcomeCanceled) + 1

var outcomeNames = [NumOutcomes]string{
	OutcomeServed:    "served",
	OutcomeError:     "error",
	OutcomeShed:      "shed",
	OutcomeThrottled: "throttled",
	OutcomeTimedOut:  "timed_out",
	OutcomeCanceled:  "canceled",
}

// String returns the Outcome's name as a metric label has it, "timed_out",
// or "Outcome(n)" for a value that is not one of the constants.
func (o Outcome) String() string { return name(o, "Outcome", outcomeNames[:]) }

// OutcomeOf returns the outcome of a call that returned err, asking err
// through the functions of package tower, so that a user's own errors are
// classified as the library's are. The first match wins:
//
//	nil                               OutcomeServed
//	tower.IsUnavailable               OutcomeError, whatever broke the service
//	a *tower.PanicError               OutcomeError, whatever the panic value
//	tower.IsOverloaded                OutcomeShed (a LoadShed's ErrOverloaded)
//	tower.IsThrottled                 OutcomeThrottled
//	tower.IsTimeout                   OutcomeTimedOut (ErrElapsed, a deadline)
//	errors.Is(err, context.Canceled)  OutcomeCanceled
//	any other error                   OutcomeError
//
// It allocates nothing.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeServed
	}
	if _, panicked := errors.AsType[*tower.PanicError](err); panicked || tower.IsUnavailable(err) {
		return OutcomeError
	}
	switch {
	case tower.IsOverloaded(err):
		return OutcomeShed
	case tower.IsThrottled(err):
		return OutcomeThrottled
	case tower.IsTimeout(err):
		return OutcomeTimedOut
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled
	}
	return OutcomeError
}
