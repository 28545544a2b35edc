// Package adaptive limits the requests in flight in a service to a limit
// that moves with the service's latency and drops: an adaptive concurrency
// limit after Netflix's concurrency-limits. Most users want [NewLayer] with
// [Gradient2] (a server) or [AIMD] (a client), under a LoadShed:
//
//	svc := stack.New[string, string]().
//		Layer(loadshed.NewLayer[string, string]()).
//		Layer(adaptive.NewLayer[string, string](adaptive.Gradient2())).
//		Service(handler)
//
// The limit is a permit that Ready takes, as a limit.Concurrency's: a
// caller waits in Ready until fewer than the limit are in flight, so the
// limit backpressures everything above it. With a LoadShed above it (the
// first layer in a list is the outermost), a caller that would wait is
// shed at once. A request is in flight from the grant of its permit until
// its call returns, or the permit is released unused.
//
// # How the limit moves
//
// Calls that end are grouped into windows ([WithWindow]). At each window's
// end an [Algorithm] gets a [Sample] and returns the new limit, clamped to
// [WithBounds] (1 to 200, starting at 20). [Gradient2] and [Vegas] are
// delay-based: they compare latency, counting below a millisecond as a
// millisecond, with the no-load latency, measured in probe windows at a
// quarter of the limit ([Prober]). [AIMD] is loss-based. All three leave
// the limit alone after a window whose requests in flight never reached
// half of it.
//
// A call's latency runs from when it leaves the limiter's queue. An answer
// (nil, or an error that is not a drop) counts with its latency; a drop
// ([WithDropped]) counts without it; a call its caller cancelled, or that
// panicked, is not counted. A drop that came with the caller's own ctx
// ended is not counted either, unless the call took at least twice the
// dependency's typical latency. Delay the process itself adds is not the
// dependency's: see [WithOwnDelay]. Every drop is counted, but to save
// clock reads only one call in a stride is timed: every call while calls
// are few and during a probe, at most one in 64 otherwise.
//
// # Priorities and waiting
//
// A request's [tower.Priority] travels in its ctx. All priorities share
// one count in flight; near the limit the lower ones stop first
// ([WithReserve]). A permit given back goes to the highest priority
// waiting, except that no priority waits through more than 8 permits
// given to higher ones, so each gets at least one permit in nine. A waiter
// with a deadline waits a bounded time ([WithWaitToDeadline]); one whose
// permit comes with less time left than the dependency's typical latency
// is refused at once.
package adaptive
