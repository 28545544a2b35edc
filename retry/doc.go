// Package retry sends a request again while a [Policy] says its result is
// worth another try: tower's Retry. Start with [NewLayer] (or [New]) and
// the [StandardPolicy] [NewPolicy] makes from a classifier of the results
// to retry, such as [AnyError], a maximum number of attempts, a [Backoff]
// and a [Budget]:
//
//	budget := retry.NewTPSBudget(10*time.Second, 10, 0.2) // tower's default
//	backoff := retry.NewExponentialBackoff(50*time.Millisecond, time.Second, 1)
//	svc := stack.New[Req, Res]().
//		Retry(retry.AnyError, // Retry > Timeout > ConcurrencyLimit
//			retry.WithMaxAttempts(3), retry.WithBackoff(backoff), retry.WithBudget(budget)).
//		Timeout(time.Second). // each attempt gets 1s
//		ConcurrencyLimit(10).
//		Service(handler)
//
// (stack's Retry is NewLayer(NewPolicy[Req, Res](AnyError, opts...)).)
// Each retry waits its backoff, then waits in the inner service's Ready
// like any caller, holding no capacity while it backs off; see [Retry]. To
// write a policy, see [Policy], [SessionPolicy] and [PolicyFunc].
//
// [ExponentialBackoff] is tower's; [FullJitterBackoff] draws the whole wait
// at random. [TPSBudget] is tower's TpsBudget. A budget that has run out
// does not fail the request: the caller gets the last attempt's result.
// Every constructor panics on bad parameters.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first.
//
//   - Retry > Timeout: each attempt is timed alone, and one that times out
//     (timeout.ErrElapsed) can be retried.
//   - Timeout > Retry: one clock covers every attempt and backoff; when it
//     runs out, the attempt in flight is cancelled, no other starts, and
//     the caller gets timeout.ErrElapsed.
//   - Retry > ConcurrencyLimit: each retry waits in line for a permit, and
//     gives it back while it backs off.
//   - Retry > LoadShed: shed requests fail at once with
//     loadshed.ErrOverloaded; retry that only within a budget and after a
//     backoff, or an overload becomes a tight loop.
//   - Retry > Buffer: each attempt queues again, behind the requests that
//     came in meanwhile.
//
// Retries at several layers multiply (three layers of three attempts send
// 27 requests): retry at one layer, or give each a budget.
//
// A request whose context carries a [metrics.Tracer] has each retry
// reported to it as an attempt, "tower.retry" in a tracing adapter; see
// [Retry].
package retry
