// Package metrics is how the middleware of this module report what they
// see. Give a [Sink] to a middleware's WithMetrics option, or wrap a stack
// with [New] for the latency and InFlight of its calls; [Counts] is a Sink
// that keeps the totals in memory, for tests and a quick look. Give each
// layer a sink of its own, so that its counts say where in the stack they
// were taken (the first layer listed is the outermost):
//
//	var calls, shed, limited metrics.Counts
//	svc := stack.New[Req, Res]().
//		Layer(metrics.NewLayer[Req, Res](&calls)). // every call: latency, InFlight
//		Layer(loadshed.NewLayer[Req, Res](loadshed.WithMetrics(&shed))). // what it turns away
//		Layer(limit.NewConcurrencyLayer[Req, Res](100, limit.WithMetrics(&limited))). // what it lets in, who waits
//		Service(handler)
//
// Where the metrics layer sits decides what its latency includes: outside
// a Buffer, the time queued; inside a ConcurrencyLimit, only the call.
// Protocol adapters report each request to a [RequestSink], and a [Tracer]
// in a request's context hears of its waits and extra attempts.
//
// # Kinds
//
// Each measurement has a [Kind]. An up-down kind reads as the number in a
// state now: a request adds 1 when it enters the state and -1 when it
// leaves it, however it leaves; Excluded and Limit add each change in the
// number. A counter adds 1 for each event.
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
// Each middleware's WithMetrics option says which kinds it reports. Only a
// caller that queues (in Ready, or in Call for a per-key token) counts as
// Waiting: not one that finds capacity free, nor one that asks with a done
// context ([tower.ReadyNow]) and finds none.
// A middleware without a sink pays only a nil check where it would report.
package metrics
