// Package hedge sends a second copy of a slow request and takes whichever
// answer comes first: tower's Hedge, the "backup request" of Finagle and
// of "The Tail at Scale". Start with [NewLayer] (or [New]) and a [Policy]
// that says which requests are safe to send twice; [Idempotent] says all
// are:
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
// of the previous period's latencies, if that period recorded at least
// minDataPoints; the first answer wins, even an error, and the other leg
// is cancelled. See [Hedge] for the race and [New] for the latencies.
//
// Each call deposits into a [retry.Budget] and each hedge sent withdraws
// from it. Without one, a shift in latencies would send every request
// twice, as the previous period's percentile no longer describes the
// current one; so each Hedge has a budget by default, and [WithBudget]
// can share one with retry policies.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first.
//
//   - Hedge > Buffer: the hedge takes a queue slot only once its delay has
//     passed; no slot is held for a hedge that may never be sent.
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
//
// A request whose context carries a [metrics.Tracer] has its hedge, if
// one is sent, reported to it as an attempt, "tower.hedge" in a tracing
// adapter; see [Hedge].
package hedge
