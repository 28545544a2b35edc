// Package metrics is how the middleware of this module report what they
// see. Give a [Sink] to a middleware's WithMetrics option, or wrap a stack
// with [New] for the latency and InFlight of its calls; [Counts] is a Sink
// that keeps the totals in memory, for tests and a quick look.
//
// Middleware count with a [Kind]; the metrics layer reports each call's
// latency with its [Outcome]. Protocol adapters report each request to a
// [RequestSink], and a [Tracer] in a request's context hears of its waits
// and extra attempts.
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
// Each middleware's WithMetrics option says which kinds it reports. A
// caller that finds capacity free, or that asks with a done context
// ([tower.ReadyNow], as a LoadShed does) and finds none, never counts as
// Waiting: only a caller that queues does. A middleware without a sink
// pays only a nil check where it would report.
//
// # One sink per layer
//
// A sink is usually given to one layer, so that its counts say where in the
// stack they were taken. The first layer listed is the outermost: here the
// metrics layer sees every call, the LoadShed counts what it turns away,
// and the limit counts what it lets in and who waits:
//
//	var calls, shed, limited, timedOut metrics.Counts
//	svc := stack.New[Req, Res]().
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
