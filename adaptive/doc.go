// Package adaptive limits the requests in flight in a service to a limit
// that moves with the service's latency and drops: an adaptive concurrency
// limit, after Netflix's concurrency-limits, in tower's readiness.
//
//	svc := tower.NewBuilder[string, string]().
//		Layer(loadshed.NewLayer[string, string]()).
//		Layer(adaptive.NewLayer[string, string](adaptive.Gradient2())).
//		Service(handler)
//
// # Where the limit sits
//
// The limit is a permit that Ready takes: a caller waits in Ready, before
// it has built or sent anything, until the requests in flight are fewer
// than the limit. So the limit backpressures everything above it, as a
// limit.Concurrency does; with a LoadShed above it (the first layer in the
// list above is the outermost), a caller that would wait is shed at once.
// A request is in flight from the grant of its permit until its call
// returns, or until the permit is released unused.
//
// # How the limit moves
//
// The limiter groups the calls that end into windows of at least a second
// and 10 timed calls ([WithWindow]; Netflix's WindowedLimit). At the end of
// each window an [Algorithm] gets a [Sample] of it (mean and least latency
// of the timed calls, drops, most in flight) and returns the new limit,
// which the limiter clamps to its bounds ([WithBounds]: 1 to 200, starting
// at 20 by default). The algorithms:
//
//   - [Gradient2], delay-based, for a server: the limit comes down when
//     latency rises above a long-term baseline by more than a tolerance,
//     and grows by a headroom when it does not, with fixes for the limit's
//     creep under moderate overload and for a baseline that drifts up in a
//     long incident.
//   - [Vegas], delay-based: it estimates the queue from how far latency is
//     above the least seen, and adds or takes away log10(limit) steps.
//   - [AIMD], loss-based, for a client: a drop multiplies the limit by 0.9,
//     a window without one adds 1. A server gives it the mean latency
//     above which a window counts as a drop ([AIMDTimeout]).
//
// None of them ever pins the limit low to measure latency afresh (Envoy's
// periodic minimum-RTT window did, and callers saw bursts of 503s). A
// user's own algorithm implements Algorithm.
//
// A call's outcome is classified by its error: nil, or an error that is
// not a drop, is an answer whose latency counts; a drop ([WithDropped];
// by default a timeout, overload or throttling) counts as a drop, without
// its latency; a call its caller cancelled, or one that panicked, tells
// nothing of the service. Reading the clock twice per call costs more than
// the rest of the limiter, so only one call in a stride is timed: the
// stride is 1 while calls are few (every call timed), and doubles, up to
// 64, while a window times more than 8 times the calls it needs. Every
// drop is counted, and every call is in flight, timed or not.
//
// # Priorities
//
// A request's [tower.Priority] travels in its ctx ([tower.WithPriority]).
// All priorities share one count of requests in flight against the limit,
// so together they never exceed it. Near the limit the lower priorities
// stop first: a normal request is admitted while fewer than limit−r are in
// flight and a low one while fewer than limit−2r are, r = ceil(limit·10%)
// ([WithReserve]); a critical one may fill the limit. So a LoadShed above
// sheds low priority first, and critical still gets in. Waiters queue per
// priority, oldest first within one; a permit given back goes to the
// highest priority waiting, except that no priority waits through more
// than 8 permits given to higher ones: the next is its own, even above its
// reserve. So under any stream of higher priorities a lower one still gets
// one permit in nine.
//
// # Metrics
//
// [WithMetrics] reports Limit, InFlight, Waiting and Shed to a
// metrics.Sink;
// [Limiter.Limit], [Limiter.InFlight] and [Limiter.Waiting] read the
// limiter's state.
package adaptive
