// Package metrics is how the middleware of this module report what they
// see: requests in flight, callers waiting in Ready, requests queued in a
// Buffer, requests shed, timed out, retried and hedged, the latency of
// calls, and the addresses a discovery left out of its set.
//
// A middleware reports to a [Sink] given with its WithMetrics option; the
// metrics layer of [New] reports a call's latency and InFlight wherever it
// is put in a stack. [Counts] is a Sink that keeps the totals in memory, for
// tests and a quick look; module github.com/towergo/tower/towerotel has a
// Sink that records OpenTelemetry instruments, which a Prometheus exporter
// can serve.
//
// # Kinds
//
// Each measurement has a [Kind]. InFlight, Waiting and Queued are up-down
// counts: a request adds 1 when it enters the state and -1 when it leaves
// it, however it leaves, so their sum is the number in that state now.
// Excluded is up-down too, for addresses: a DNS Discover adds the change
// in the number its lookup left out, so the sum is the number its last
// lookup left out. Limit is up-down too, for a limit: an adaptive limiter
// adds the limit it starts with and then each change, so the sum is the
// limit now. Open and Ejected are up-down too: breakers open or half-open,
// endpoints held out by outlier detection. Shed, TimedOut, Retried,
// Hedged, Tripped and Throttled are counters: 1 for each event.
//
//	kind      reported by                 +1                               -1
//	InFlight  limit.Concurrency           Ready takes a permit             the call returns, or the permit is released
//	          metrics.New                 the inner Ready grants           the call returns, or the permit is released
//	Waiting   limit.Concurrency           a caller queues for a permit     it leaves the queue, granted or not
//	          limit.Rate                  a caller queues for a window     it leaves the queue, granted or not
//	          buffer.Buffer               a caller queues for a slot       it leaves the queue, with a slot or not
//	Queued    buffer.Buffer               a request is queued              it leaves the queue with the inner permit, or
//	                                                                       without: given up, failed or closed
//	Shed      loadshed.LoadShed           a shedding permit is called
//	TimedOut  timeout.Timeout             a call ends with this Timeout's ErrElapsed
//	Retried   retry.Retry                 a retry is sent, after its backoff and its Ready
//	Hedged    hedge.Hedge                 a hedge is sent, after its delay and its Ready
//	Excluded  discover.DNS                a lookup leaves more addresses   a lookup leaves fewer addresses
//	                                      out than the last one            out than the last one
//	Limit     adaptive.Limiter            the limit goes up (and the       the limit comes down
//	                                      initial limit, at New)
//	Open      breaker.Breaker             it opens (from closed)           it closes (from half-open)
//	Tripped   breaker.Breaker             it opens (from closed or half-open)
//	Ejected   balance (outlier detection) an endpoint is ejected           it comes back, or leaves the set
//	Throttled throttle.Throttle           a request is failed unsent
//
// A caller that finds capacity free, or that asks with a done context
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
