package metrics

import (
	"context"
	"errors"
	"fmt"

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
	OutcomeServed Outcome = iota + 1
	// OutcomeError is a call that failed with an error none of the others
	// stands for: the service's own error, a panic, a service that is
	// unavailable (tower.IsUnavailable: closed, or broken for good).
	OutcomeError
	// OutcomeShed is a call turned away because the service could not
	// take it then (tower.IsOverloaded): a LoadShed's ErrOverloaded.
	OutcomeShed
	// OutcomeThrottled is a call turned away because its caller was over
	// its allowance (tower.IsThrottled).
	OutcomeThrottled
	// OutcomeTimedOut is a call that ran out of time (tower.IsTimeout): a
	// Timeout's ErrElapsed, or a context's deadline.
	OutcomeTimedOut
	// OutcomeCanceled is a call whose caller gave up: context.Canceled,
	// the client gone.
	OutcomeCanceled
)

// NumOutcomes is one more than the largest Outcome: a Sink that keeps a
// value per Outcome can index an array of NumOutcomes by Outcome.
const NumOutcomes = int(OutcomeCanceled) + 1

var outcomeNames = [NumOutcomes]string{
	OutcomeServed:    "served",
	OutcomeError:     "error",
	OutcomeShed:      "shed",
	OutcomeThrottled: "throttled",
	OutcomeTimedOut:  "timed_out",
	OutcomeCanceled:  "canceled",
}

// String returns the Outcome's name as a metric label has it: "served",
// "error", "shed", "throttled", "timed_out" or "canceled", or
// "Outcome(n)" for a value that is not one of the constants.
func (o Outcome) String() string {
	if o > 0 && int(o) < NumOutcomes {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// OutcomeOf returns the outcome of a call that returned err, asking err
// through the functions of package tower, so that a user's own errors are
// classified as the library's are. The first match wins:
//
//	nil                                  OutcomeServed
//	tower.IsUnavailable                  OutcomeError: the service is broken or
//	                                       closed, whatever broke it
//	a *tower.PanicError                  OutcomeError, whatever the panic value
//	tower.IsOverloaded                   OutcomeShed
//	tower.IsThrottled                    OutcomeThrottled
//	tower.IsTimeout                      OutcomeTimedOut
//	errors.Is(err, context.Canceled)     OutcomeCanceled
//	any other error                      OutcomeError
//
// It allocates nothing.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeServed
	}
	switch {
	case tower.IsUnavailable(err), panicked(err):
		return OutcomeError
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

// panicked reports whether err carries a panic in user code.
func panicked(err error) bool {
	_, ok := errors.AsType[*tower.PanicError](err)
	return ok
}
