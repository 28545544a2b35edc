// Package breaker is a circuit breaker whose open state is a service that
// is not ready, so that a balancer skips a failing endpoint. Start with
// [New] (or [NewLayer], a breaker per service it wraps) and a failure
// classifier such as [AnyError]:
//
//	svc := breaker.New(backend, breaker.AnyError,
//		breaker.WithConsecutiveFailures(5),
//		breaker.WithOpenDelay(5*time.Second, 5*time.Minute))
//
// # States
//
// A [Breaker] is closed, open or half-open ([State]).
//
//   - Closed: requests go through, and each call's result is classified.
//     The breaker trips to open at the nth failure in a row
//     ([WithConsecutiveFailures], the default), or when failures reach a
//     share of a window's calls ([WithFailureRatio]), whichever comes
//     first.
//   - Open: Ready waits, bounded by its ctx, for the open delay, which
//     doubles at each trip in a row ([WithOpenDelay], [WithJitter]).
//   - Half-open: after the delay, the first Ready moves the breaker to
//     half-open and gets a probe permit. At most [WithProbes] probe permits
//     are out at once, until called or released; a Ready that finds them
//     all out waits. After [WithSuccesses] probes succeed, the breaker
//     closes and the delay starts again from base; one probe that fails
//     opens it again, for a doubled delay.
//
// # Results
//
// A permit's call records its result only in the period (the stay in one
// state) the permit was admitted in: a late result, such as that of a call
// admitted while closed that ends after the breaker opened, is dropped,
// though the permit itself stays good. A call that panics counts as a failure; a classifier that panics records
// nothing. A call whose ctx ended with an error the classifier does not
// count records nothing: the caller gave up, which says nothing of the
// backend.
//
// # Where it sits
//
// The first layer listed is the outermost. Inside a balancer, wrap each
// endpoint: the balancer skips the open ones. LoadShed > Breaker fails
// requests at once while the breaker is open, where Breaker alone makes
// them wait. Retry > Breaker makes a retry wait while it is open, within
// its deadline. Breaker > Timeout counts timeout.ErrElapsed as a failure
// with AnyError.
package breaker
