// Package retry sends a request again when a [Policy] says its result is
// worth another try: tower's Retry, with tower's backoff and retry budget.
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
// Package stack builds the Retry there as
// NewLayer(NewPolicy[Req, Res](AnyError, opts...)), and the other layers
// with their packages' constructors, from one list of type arguments.
//
// # Attempts
//
// A [Retry]'s Ready is the first attempt's readiness: it waits for the
// inner service and wraps its permit. Call sends the first attempt on that
// permit; then, as long as the policy asks for another, it waits the
// policy's backoff, waits in the inner service's Ready, and sends the next
// attempt on the new permit. Each attempt therefore waits for capacity like
// any caller, and holds none while it backs off. No attempt starts once the
// ctx given to Call is done; a ctx that ends while the Retry waits ends the
// call with ctx.Err().
//
// # Policies
//
// A [Policy] has two methods. Clone copies the request before it is sent,
// since sending may use it up, and says false for a request that cannot be
// sent twice, such as one whose body is a stream already read: that
// request is tried once, whatever happens. Retry looks at each attempt's
// result, as an [*Attempt], and says whether to try again and after what
// wait; it may change the request the next attempt sends, and the result
// the caller gets.
//
// A Policy is shared by all requests. tower clones its policy for each
// request, so that a policy can count attempts; here the attempt's number,
// [Attempt.N], does the counting, and a policy that needs more state per
// request implements [SessionPolicy], whose NewSession makes a policy for
// one request. Cross-request state, such as a [Budget], stays shared.
//
// [StandardPolicy], from [NewPolicy], is the ready-made one: a classifier
// for the results to retry, a maximum number of attempts, a [Backoff] and a
// [Budget]. [PolicyFunc] makes a policy of a function, for requests that
// copying clones.
//
// # Backoff and budgets
//
// [ExponentialBackoff] is tower's: min·2^(n-1) capped at max, plus a
// random part of up to jitter times that, with tower's rules for bad
// parameters, which panic here as they do in every constructor of this
// module. [FullJitterBackoff] draws the whole wait at random below that
// bound.
//
// [TPSBudget] is tower's TpsBudget, Finagle's RetryBudget, with tower's
// integer arithmetic: it lets a share of the recent requests be retried,
// plus a few per second. A budget that has run out does not fail the
// request: the caller gets the last attempt's result, response or error.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. Where the Retry sits decides what a timeout measures and
// what a retry waits for:
//
//   - Retry > Timeout: each attempt is timed alone, and an attempt that
//     times out (timeout.ErrElapsed) can be retried.
//   - Timeout > Retry: one clock covers every attempt and every backoff;
//     when it runs out, the attempt in flight is cancelled, no other
//     starts, and the caller gets timeout.ErrElapsed.
//   - Retry > ConcurrencyLimit: each retry waits in line for a permit, and
//     gives its permit back while it backs off.
//   - Retry > LoadShed: shed requests fail at once with
//     loadshed.ErrOverloaded; a policy that retries that error should do so
//     within a budget and after a backoff, or it turns an overload into a
//     tight loop.
//   - Retry > Buffer: each attempt queues again, behind the requests that
//     came in while the previous one ran.
//
// Retries at several layers multiply: three layers of three attempts each
// send 27 requests to the bottom. Retry at one layer, or give each a
// budget.
//
// # Tracing
//
// A request whose context carries a [metrics.Tracer] has each of its
// retries reported to it, as an attempt that spans the retry's backoff,
// its Ready and its Call, named "tower.retry" (a tracing adapter makes
// each one a span). A request that is not retried pays nothing.
package retry
