// Package metrics is how the middleware of this module report what they
// see: requests in flight, callers waiting in Ready, requests queued in a
// Buffer, requests shed, timed out, retried and hedged, the latency of
// calls, and the addresses a discovery left out of its set.
//
// A middleware reports to a [Sink] given with its WithMetrics option; the
// metrics layer of [New] reports a call's latency and InFlight wherever it
// is put in a stack. [Counts] is a Sink that keeps the totals in memory, for
// tests and a quick look; a Sink of a metrics system's own records its
// instruments.
//
// # Kinds
//
// Each measurement has a [Kind]. InFlight, Waiting and Queued are up-down
// counts: a request adds 1 when it enters the state and -1 when it leaves
// it, however it leaves, so their sum is the number in that state now.
// Excluded is up-down too, for addresses: a discovery adds the change in
// the number its lookup left out, so the sum is the number its last lookup
// left out. Limit is up-down too, for a limit: a limiter adds the limit it
// starts with and then each change, so the sum is the limit now. Open and
// Ejected are up-down too: breakers open or half-open, endpoints held out
// of a balancer's set. Shed, TimedOut, Retried, Hedged, Tripped and
// Throttled are counters: 1 for each event.
//
//	kind      +1                                     -1
//	InFlight  a request's reservation is granted     its call returns, or the reservation is released unused
//	Waiting   a caller starts waiting for capacity   it stops waiting, granted or not
//	Queued    a request is queued                    it leaves the queue, served or not
//	Shed      a request is turned away at once, unsent, for want of capacity
//	TimedOut  a call ends because its time ran out
//	Retried   a retry is sent
//	Hedged    a hedge is sent
//	Excluded  a lookup leaves more addresses out     a lookup leaves fewer addresses out
//	Limit     the limit goes up (and the first one)  the limit comes down
//	Open      a breaker opens (from closed)          it closes (from half-open)
//	Tripped   a breaker opens (from closed or half-open)
//	Ejected   an endpoint is held out of the set     it comes back, or leaves the set
//	Throttled a request is failed at once, unsent, for its sender's or its key's rate
//
// Each middleware's WithMetrics option says which kinds it reports. A
// caller that finds capacity free, or that asks with a done context
// ([tower.ReadyNow], as a LoadShed does) and finds none, never counts as
// Waiting: only a caller that queues does.
//
// # Cost
//
// A middleware without a sink pays one nil check, where it would report:
// on the path of a request that waits, is shed, times out, is retried or
// hedged, and on the request path itself only for a ConcurrencyLimit's
// InFlight and the choice of a Buffer's or a limit's way of waiting. With a
// sink, it pays the sink's calls and nothing else: no allocation, no lock.
// A Sink runs on the request path, so it must be cheap and safe for
// concurrent use; Counts is a few atomic adds.
//
// # One sink per layer
//
// A sink is usually given to one layer, so that its counts say where in the
// stack they were taken. In every list of layers the first one is the
// outermost: it sees the request first. Here the metrics layer sees every
// call, the LoadShed counts what it turns away, and the limit counts what
// it lets in and who waits:
//
//	var calls, shed, limited, timedOut metrics.Counts
//	svc := tower.NewBuilder[Req, Res]().
//		Layer(metrics.NewLayer[Req, Res](&calls)). // latency and InFlight of the whole stack
//		Layer(loadshed.NewLayer[Req, Res](loadshed.WithMetrics(&shed))).
//		Layer(limit.NewConcurrencyLayer[Req, Res](100, limit.WithMetrics(&limited))).
//		Layer(timeout.NewLayer[Req, Res](time.Second, timeout.WithMetrics(&timedOut))).
//		Service(handler)
//
// Where the metrics layer sits decides what its latency includes, as it does
// for a Timeout: outside a Buffer, the time queued; inside a
// ConcurrencyLimit, only the call. It never times Ready.
package metrics
