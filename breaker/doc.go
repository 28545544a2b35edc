// Package breaker is a circuit breaker whose open state is a service that
// is not ready: the breaker tower's maintainers asked for, that makes a
// failing endpoint "not ready" so that a balancer skips it.
//
//	svc := breaker.New(backend, breaker.AnyError,
//		breaker.WithConsecutiveFailures(5),
//		breaker.WithOpenDelay(5*time.Second, 5*time.Minute))
//
// # States
//
// A [Breaker] is closed, open or half-open ([State]).
//
//   - Closed: requests go through, and each call's result is classified:
//     the failure classifier given to [New] says whether it is a failure of
//     the backend ([AnyError] for errors; a protocol's adapter may offer
//     one by status, of the same type func(res Res, err error) bool).
//     The breaker trips to open at the nth
//     failure in a row ([WithConsecutiveFailures]), or when failures reach
//     a share of the calls of a window that holds enough of them
//     ([WithFailureRatio], over the last calls or the last duration), or
//     on whichever comes first if both are given.
//   - Open: Ready waits, bounded by its ctx, and nothing is sent, for the
//     open delay: base·2^(trips-1) after the trips-th trip in a row, at
//     most max ([WithOpenDelay]), less a random share ([WithJitter]).
//   - Half-open: after the delay, the first Ready moves the breaker to
//     half-open and gets a probe permit. At most [WithProbes] probe permits
//     exist at once, counting those handed out and not yet called or
//     released; a Ready that finds them all out waits. After
//     [WithSuccesses] probes succeed, the breaker closes, and the delay
//     starts again from base; one probe that fails opens it again, for a
//     doubled delay.
//
// A probe permit is a reservation like any: it is called or released, and
// a probe released unused gives its place back. So probes cannot pile up,
// nor can a breaker stay half-open for want of a probe's answer, as
// breakers that count probes apart from their permits can, and an outage
// is not made worse by probes without bound.
//
// # Readiness
//
// While the breaker is open, Ready waits until a probe may go. Given a
// done ctx, it answers at once with ctx.Err(): [tower.ReadyNow] says "not
// ready", a LoadShed outside sheds at once with loadshed.ErrOverloaded,
// and a balancer's ready cache sees the endpoint pending and sends
// elsewhere. The breaker never fails Ready with an error of its own: such
// an error would mean broken for good. A Ready waiting for the delay is
// woken exactly when it ends, by a timer armed while someone waits; a
// breaker nobody waits on holds no timer and no goroutine, and the closed
// state arms nothing.
//
// Ready takes the breaker's admission first (nothing, when closed; a
// probe's place, when half-open), then waits for the inner service; if
// that fails, the admission is given back and the inner service's error is
// returned unchanged. If the breaker changed state while the inner service
// was waited for, Ready gives the inner permit back and starts again, so
// that requests queued in a limit below do not go out to a backend the
// breaker has just given up on.
//
// # Results
//
// A permit's call classifies its result and records it. A call that
// panics counts as a failure, and the panic goes on up; a classifier that
// panics records nothing, gives back what the permit held, and its panic
// goes on up. A call whose ctx ended with an error the classifier does not
// count as a failure records nothing either: the caller gave up, which
// says nothing of the backend.
//
// Each permit carries the period (the stay in one state, from one change
// to the next) it was admitted in, and its result counts only in that
// period. A late result, of a call admitted in an earlier period (a slow
// call started while closed that ends after the breaker opened, or a probe
// of a half-open period that has ended), is dropped: it neither trips the
// breaker nor counts toward closing it, and a probe place of a period
// that is over is not given back twice. A permit granted while closed
// stays good if the breaker opens before it is called: its request goes
// out, and its result is late.
//
// # Defaults, and why
//
// A breaker given no trip condition trips at 5 failures in a row
// (DefaultConsecutiveFailures): Envoy's consecutive_5xx and Finagle's
// consecutiveFailures. Counting failures in a row works at any rate of
// traffic, where a ratio with a minimum of calls never trips for a client
// that sends less than the minimum in a window (Polly's 100 calls in 30s
// wants 3.3 requests a second), and it is what lets the closed state run
// on atomics alone. Linkerd notes the other side: consecutive failures
// miss a partial outage, which a ratio sees; add [WithFailureRatio] for
// that, with Polly's numbers (0.1 of at least 100 calls in the last 30s)
// or resilience4j's (0.5 of the last 100 calls), and the breaker trips on
// whichever comes first, as Finagle's and Linkerd's do.
//
// The open delay starts at 5s (DefaultOpenDelay: Polly's BreakDuration,
// and where Finagle's dead time starts), doubles at each trip in a row,
// up to 300s (DefaultMaxOpenDelay: where Finagle's stops, and Envoy's
// max_ejection_time), less a random share of up to half
// (DefaultJitter: Finagle's equal jitter, Linkerd's jitter of 0.5). One
// probe at a time, and one success to close, as Finagle and Linkerd
// admit exactly one probe.
//
// # A shared budget
//
// [WithBudget] makes each probe draw on a retry.Budget, the one a
// client's retries and hedges draw on, so that together they add no more
// load than it allows. A probe goes only if the budget's Withdraw
// succeeds; when it refuses, the breaker stays open for another delay as
// long as the last one.
//
// # Observability and control
//
// [WithMetrics] reports metrics.Open (+1 as the breaker leaves closed, -1
// as it closes again) and metrics.Tripped (+1 at each transition to
// open); [WithStateChange] calls a function at each change, in order and
// outside the lock; [Breaker.State] tells the state now. [Breaker.Isolate]
// opens the breaker until [Breaker.Reset], which closes it.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. A breaker belongs to one backend: inside a balancer, wrap
// each endpoint ([NewLayer] makes a breaker per service it wraps), and the
// balancer skips the open ones. LoadShed > Breaker fails requests at once
// while the breaker is open, where Breaker alone makes them wait. Retry >
// Breaker sends each retry through the breaker, and a retry waits while it
// is open, within the request's deadline. Breaker > Timeout counts
// timeout.ErrElapsed as a failure with AnyError, since it is no
// cancellation.
package breaker
