// Package hedge sends a second copy of a slow request and takes whichever
// answer comes first: tower's Hedge. Start with [NewLayer] (or [New]) and
// a [Policy] that says which requests are safe to send twice; [Idempotent]
// says all are:
//
//	svc := stack.New[Req, Res]().
//		Layer(hedge.NewLayer[Req, Res](hedge.Idempotent[Req]{}, // every request is safe to send twice
//			100,            // hedge only once the last period saw 100 latencies
//			0.95,           // after the 95th percentile of them
//			10*time.Second, // the period
//		)).
//		Layer(limit.NewConcurrencyLayer[Req, Res](10)).
//		Service(handler)
//
// A hedge is sent once the original has gone unanswered for a percentile
// of the previous period's latencies; the first answer wins, even an
// error, and the other leg is cancelled (see [Hedge]). Hedges draw on a
// [retry.Budget], each Hedge's own by default ([WithBudget]), lest a shift
// in latencies send every request twice.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first.
//
//   - Hedge > Buffer: the hedge takes a queue slot only once its delay has
//     passed.
//   - Hedge > ConcurrencyLimit: the hedge waits for a permit like any
//     caller, and the original's answer ends its wait. The permit the
//     original frees as it answers can reach the waiting hedge before the
//     answer reaches the race; the hedge is then sent, and cancelled at
//     once.
//   - Hedge > Timeout: each leg is timed alone, and a leg that times out
//     answers with timeout.ErrElapsed if it answers first. Timeout > Hedge
//     times the call as a whole.
//   - Retry > Hedge: each attempt may be hedged; share one budget (see
//     [WithBudget]).
//   - Over a balancer, the hedge is balanced like any request, and likely
//     goes to another endpoint.
package hedge
