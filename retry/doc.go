// Package retry sends a request again while a [Policy] says its result is
// worth another try: tower's Retry. Start with [NewLayer] (or [New]) and
// a [NewPolicy] given a classifier of the results to retry, such as
// [AnyError], and options for attempts, [Backoff] and [Budget]:
//
//	budget := retry.NewTPSBudget(10*time.Second, 10, 0.2) // tower's default
//	backoff := retry.NewExponentialBackoff(50*time.Millisecond, time.Second, 1)
//	svc := stack.New[Req, Res]().
//		Retry(retry.AnyError,
//			retry.WithMaxAttempts(3), retry.WithBackoff(backoff), retry.WithBudget(budget)).
//		Timeout(time.Second). // each attempt gets 1s
//		ConcurrencyLimit(10).
//		Service(handler)
//
// Each retry waits its backoff, then waits in the inner service's Ready
// like any caller, holding no capacity while it backs off. A budget that
// has run out does not fail the request: the caller gets the last
// attempt's result.
//
// # Where it sits
//
// The first layer listed is the outermost.
//
//   - Retry > Timeout: each attempt is timed alone, and one that times out
//     (timeout.ErrElapsed) can be retried.
//   - Timeout > Retry: one clock covers every attempt and backoff; when it
//     runs out, the attempt in flight is cancelled and no other starts.
//   - Retry > LoadShed: shed requests fail at once; retry them only within
//     a budget and after a backoff, or an overload becomes a tight loop.
//   - Retry > Buffer: each attempt queues again, behind newer requests.
//   - Retries at several layers multiply (three layers of three attempts
//     send 27 requests): retry at one layer, or give each a budget.
package retry
