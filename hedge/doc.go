// Package hedge sends a second copy of a slow request and takes whichever
// answer comes first: tower's Hedge, the "backup request" of Finagle and
// of Dean and Barroso's "The Tail at Scale".
//
//	svc := tower.NewBuilder[Req, Res]().
//		Layer(hedge.NewLayer[Req, Res](hedge.Idempotent[Req]{}, // every request is safe to send twice
//			100,            // hedge only once the last period saw 100 latencies
//			0.95,           // after the 95th percentile of them
//			10*time.Second, // the period
//		)).
//		Layer(limit.NewConcurrencyLayer[Req, Res](10)).
//		Service(handler)
//
// # The delay
//
// A [Hedge] records the latency of each successful answer, in whole
// milliseconds rounded up, in a histogram of the current period; a hedge's
// delay is a percentile of the previous period's histogram, so it rests on
// one full period of latencies and changes once per period. Until the
// previous period has recorded minDataPoints latencies, nothing is hedged.
// The delay is fixed when the call starts. The histograms keep 3
// significant digits from 1ms to about 70 minutes in bounded memory; see
// [New].
//
// # The race
//
// Call sends the original at once, on the permit Ready reserved. If it
// has not answered when the delay passes, the hedge leg asks the
// [Policy]'s CanRetry, draws on the budget, waits for the inner service to
// be ready and sends the copy the policy's Clone made when the call
// started. The first leg to answer wins, even with an error; the other's
// context is cancelled, and Call returns once it has returned, so that
// whatever it held is given back first. A request the policy does not
// clone is never hedged: hedging sends a request twice, so only
// idempotent requests should be.
//
// # Budget
//
// Each call deposits into a budget and each hedge sent withdraws from it
// (a [retry.Budget]; by default a [retry.TPSBudget] of 10 seconds that
// allows the share of requests the percentile leaves above it, plus 10 per
// second). Without one, a shift in latencies would make every request go
// out twice: the previous period's percentile no longer describes the
// current one. [WithBudget] shares one budget among Hedges and retry
// policies, as Finagle and gRPC cap retries and hedges together.
//
// # Tracing
//
// A request whose context carries a [metrics.Tracer] has its hedge, if
// one is sent, reported to it as an attempt that spans the hedge's Ready
// and Call, named "tower.hedge" (a tracing adapter makes it a span). A
// call whose hedge is not sent pays nothing.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first.
//
//   - Hedge > Buffer: the hedge waits for a queue slot only once its delay
//     has passed; no slot is held for a hedge that may never be sent
//     (tower PR #472 fixed the opposite).
//   - Hedge > ConcurrencyLimit: the hedge waits for a permit like any
//     caller; a limit that is full delays the hedge, and the original's
//     answer ends its wait. The permit the original frees as it answers
//     can reach the waiting hedge before the answer reaches the race; the
//     hedge is then sent, and cancelled at once.
//   - Hedge > Timeout: each leg is timed alone, and a leg that times out
//     answers the call with timeout.ErrElapsed, if it answers first.
//     Timeout > Hedge times the call as a whole.
//   - Retry > Hedge: each attempt may be hedged. Share one budget between
//     them.
//   - Over a balancer, the hedge is balanced like any request, and likely
//     goes to another endpoint.
package hedge
