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
// of the timed calls, drops, most in flight, callers blocked at the limit)
// and returns the new limit, which the limiter clamps to its bounds
// ([WithBounds]: 1 to 200, starting at 20 by default).
//
// While the limit settles the windows are short, a tenth of the length
// and half the timed calls: after a probe, and after a window that moved
// the limit in force, or whose mean latency moved, by a quarter or more.
// And a window ends at once after a run of 5 timed calls (half the
// minimum) whose median is above twice the last window's mean, or, while
// callers are blocked at the limit, each of which is below three quarters
// of it: the algorithm then sees that run alone. So a dependency that
// loses or regains capacity, or becomes slower or faster, is acted on
// within a few of its calls, not at the end of a second's window. A
// window's mean counts each call at most twice the last window's mean
// (a run's, twice the run's median): a rare slow call, such as one
// request in 50 that takes twenty times as long, is not queueing, and
// would otherwise bring a limit of short windows down. The algorithms:
//
//   - [Gradient2], delay-based, for a server: the limit comes down at once
//     to what keeps latency within a tolerance of the no-load latency (by
//     Little's law), holds within it, and grows when there is no queueing:
//     it doubles (a slow start, as TCP's) while callers are blocked at a
//     limit that shows no queueing, from the last limit that queued.
//   - [Vegas], delay-based: it estimates the queue from how far latency is
//     above the no-load latency, and moves the limit to keep that queue
//     between α and β; with no queue at all and callers blocked, it
//     doubles.
//   - [AIMD], loss-based, for a client: a drop multiplies the limit by 0.9,
//     a window without one adds 1. A server gives it the mean latency
//     above which a window counts as a drop ([AIMDTimeout]).
//
// # Probes: the no-load latency
//
// The delay-based algorithms compare latency with the service's no-load
// latency, which they measure in probe windows ([Prober]): for a short
// window the limit in force is a quarter of the algorithm's, at least 3,
// and the mean latency of the calls that started with no more in flight
// is the no-load latency. A limiter starts with a probe, so one started
// under overload does not take its queue for the service's latency; the
// algorithms probe again when latency jumps past 3 times the no-load
// latency or stays above their tolerance while the limit falls (a service
// that became slower is measured anew rather than driven to the floor),
// when a window is 20% faster (a service that became faster), and about
// once a minute. A probe lasts until it has timed as many calls as normal
// priority may have in flight in it (a round trip at its limit), at most
// a short window's minimum, or a window; under a LoadShed, callers beyond
// its limit are shed meanwhile, as Envoy's minimum-RTT measurement does,
// which is what a probe costs.
//
// # What the dependency is blamed for
//
// A call's latency runs from the moment it leaves the limiter: time spent
// waiting in the limiter's own queue is not the dependency's. A call's
// outcome is classified by its error: nil, or an error that is not a
// drop, is an answer whose latency counts; a drop ([WithDropped]; by
// default a timeout, overload or throttling) counts as a drop, without its
// latency; a call its caller cancelled, or one that panicked, tells
// nothing of the service. A drop that came with the caller's own ctx
// ended is the caller's deadline, not the dependency's, unless the call
// had at least twice the dependency's typical latency: a caller that spent
// its deadline in a queue in front of the dependency says nothing of it.
// And a waiter whose permit comes with less time left before its deadline
// than the dependency's typical latency is refused at once, as a LoadShed
// would, rather than sent to miss its deadline holding a permit that the
// waiter behind could use.
//
// The rule for the process's own delay: latency that the process itself
// adds, its goroutines waiting to run or for a worker of its own, is not
// the dependency's, and [WithOwnDelay] tells the limiter how much of each
// window's latency it is ([SchedDelay] measures the Go scheduler's part).
// The delay-based algorithms compare only the rest with the no-load
// latency, so a rise that comes with no rise in the dependency's own time
// never lowers the limit; and when the process's own delay is most of the
// latency, the process is the bottleneck: the limit grows while the load
// reaches it, fourfold a window while callers are blocked at it (from
// the first probe on, when the process held even the probe back), and
// never falls on latency, so callers are not shed while the dependency
// has headroom. Drops still lower it. An own delay beyond half the
// latency says that the process is the bottleneck, not how little the
// dependency took: a probe then keeps the no-load latency it had, and
// the dependency's part is taken as half the latency, never less.
//
// Below a millisecond, latency is mostly the caller's own path (system
// calls, wake-ups, batching that more calls in flight make cheaper per
// call), which the own delay sees little of: the delay-based algorithms
// take any latency below a millisecond, the no-load latency's too, as a
// millisecond. A 100µs dependency may so run at a millisecond before its
// limit falls, rather than be held to the two or three calls in flight
// that keep it within 1.5 times 100µs, at a fraction of what it can
// serve. A limit at its lower bound takes that window's latency for the
// no-load latency, and grows from there as from any window without
// queueing: a floor is not a trap.
//
// Reading the clock twice per call costs more than the rest of the
// limiter, so only one call in a stride is timed: the stride is 1 while
// calls are few (every call timed), and leaves about 4 times a short
// window's minimum timed in a short window, up to 64; it doubles while a
// window times more than twice what a window of the full length needs;
// during a probe every call is timed. Every drop is counted, and every
// call is in flight, timed or not.
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
// priority; a permit given back goes to the highest priority waiting,
// except that no priority waits through more than 8 permits given to
// higher ones: the next is its own, even above its reserve. So under any
// stream of higher priorities a lower one still gets one permit in nine.
//
// # Waiting for a permit
//
// Without a LoadShed, a caller waits in Ready for a permit. One whose ctx
// has a deadline waits at most twice the dependency's typical latency (the
// last window's mean, less the process's own delay), oldest first within
// its priority; once the queue has not emptied for that long, a standing
// queue whose waiters come as fast as permits free up, at most the typical
// latency, newest first (CoDel's target, and Facebook's adaptive LIFO). A
// refused caller's Call fails with loadshed.ErrOverloaded, as a LoadShed's
// does. Waiting longer would only add the wait to every answer: under a
// standing queue fresh callers are answered in time and stale ones
// refused, rather than all of them waiting until their deadline, most to
// no use. A caller without a deadline is never refused, and goes when it
// is the oldest of its priority. [WithWaitToDeadline] restores waiting
// until the deadline, oldest first.
//
// # Metrics
//
// [WithMetrics] reports Limit, InFlight, Waiting and Shed to a
// metrics.Sink;
// [Limiter.Limit], [Limiter.InFlight] and [Limiter.Waiting] read the
// limiter's state.
package adaptive
