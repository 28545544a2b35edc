// Package timeout fails a call that the inner service has not answered
// within a fixed duration, with [ErrElapsed] ("request timed out").
//
//	svc := tower.NewBuilder[string, string]().
//		Layer(timeout.NewLayer[string, string](150 * time.Millisecond)).
//		Layer(limit.NewConcurrencyLayer[string, string](10)).
//		Service(handler)
//
//	rsp, err := tower.Call(ctx, svc, "hello")
//	if errors.Is(err, timeout.ErrElapsed) {
//		// the call took more than 150ms
//	}
//
// # The clock starts in the call
//
// Ready is passed through untimed: the clock starts when the permit is
// called, as tower's starts in call, never in poll_ready. A caller that
// waits 500ms in Ready and whose call then takes 100ms is well within a
// Timeout of 150ms. No layer can time Ready, because an error from Ready
// means the service is broken for good (see package tower).
//
// # Placement decides what is timed
//
// The Timeout times whatever happens below it during the call, and nothing
// that happens in Ready. So where it sits in a stack, the first layer
// listed outermost, decides whether queueing counts:
//
//   - Timeout > ConcurrencyLimit: the wait for the limit's permit happens in
//     Ready, before the clock starts, and does not count.
//   - Timeout > Buffer > ...: Buffer's Ready only reserves a queue slot, and
//     its Call waits in the queue, so the time spent queueing counts.
//   - Buffer > Timeout > ...: a queued request calls the Timeout only once
//     its turn has come and the service below is ready, so queueing does
//     not count.
//
// With three callers at once, each request taking 100ms, a Timeout of 150ms
// and a ConcurrencyLimit of 1, the program in examples/placement of this
// module prints, in short:
//
//	A: Timeout > ConcurrencyLimit(1)          no request times out (100, 200, 300ms)
//	B: Timeout > Buffer > ConcurrencyLimit(1) requests 2 and 3 time out at 150ms
//	C: Buffer > Timeout > ConcurrencyLimit(1) no request times out (100, 200, 300ms)
//
// To bound a caller's whole wait, readiness included, give the caller's
// context a deadline: [tower.Call] with a ctx from context.WithTimeout covers
// both Ready and the call. A caller whose wait for a permit outlasts its
// deadline gets context.DeadlineExceeded from Ready (examples/queueing
// prints it).
//
// # ErrElapsed and context.DeadlineExceeded
//
// ErrElapsed means this Timeout's deadline came first. At that deadline the
// inner call's context ends, with context.DeadlineExceeded as its error and
// ErrElapsed as its cause (see context.Cause), and the caller gets
// ErrElapsed, which layers above may wrap with %w.
//
// A caller whose own context has a deadline at or before the Timeout's gets
// context.DeadlineExceeded, never ErrElapsed: the earlier deadline governs,
// the inner call gets the caller's context as it is, and its expiry reaches
// the caller as that context's error. A later caller deadline leaves the
// Timeout in charge.
//
// Whichever deadline governs, a response that comes back at or after it
// is discarded and replaced by the error above: a Timeout never passes on
// a late response. That is all a Timeout replaces.
//
// A caller that cancels its context before the deadline cancels the inner
// call's context. In Cooperative mode the rest is the inner call's
// business: whatever it returns before the deadline is passed on as it is
// (a well-behaved inner call returns context.Canceled at once; one that
// ignores its context may still answer, and its answer stands); if it
// returns after the deadline, the caller gets context.Canceled, not
// ErrElapsed, since its cancellation came first. In Abandon mode, whose
// point is that the caller never waits for the inner call past the moment
// it stops waiting, the caller gets context.Canceled at once, as it would
// at a deadline, unless the inner call's answer was already there.
//
// # Modes
//
// The inner call's context ends at the deadline, and a well-behaved Go
// function then returns at once. What differs is what happens when it does
// not, and keeps working past the deadline.
//
// [Cooperative], the default, runs the inner call on the caller's goroutine
// and answers when it returns: against an inner call that ignores its
// context and takes 300ms, a Timeout of 100ms answers ErrElapsed at 300ms.
// It is the default because it starts no goroutine per request, nothing a
// request started outlives it, and whatever the call held below the
// Timeout (a concurrency permit, a connection) is given back before the
// caller hears, so a caller that retries at once finds it free. It is also
// the only mode in which a response at the very instant of the deadline
// reliably wins, as in tower.
//
// [Abandon] answers ErrElapsed at the deadline, at 100ms in the example,
// whatever the inner call does, like net/http's TimeoutHandler. It runs
// each inner call on a goroutine of its own; the abandoned call keeps
// running, and keeps whatever was reserved below the Timeout (a
// concurrency permit, a queue slot, a connection), until it returns, so a
// caller that retries at once may find the permit it wants still taken.
// Choose it to put a hard bound on the caller's wait in front of code that
// does not honour its context.
//
// In Cooperative mode a panic in the inner call happens on the caller's
// goroutine, and goes on up to the caller as it would without the
// Timeout, once the call's context is cancelled and the layers below have
// given back what they reserved. In Abandon mode it happens on a
// goroutine the Timeout started, and must not end the program: the
// caller, if it still waits, gets it as an error, a [*tower.PanicError]
// that carries the panic's value and stack; one that
// comes after the caller was answered is logged, with its stack, to
// log/slog's default logger. A runtime.Goexit in the inner call is
// treated the same way.
//
// Choose the mode with [WithMode].
//
// # Place the Timeout above the limits
//
// Put a Timeout above the limits of its stack, Timeout > ConcurrencyLimit,
// rather than under them. In Cooperative mode the two orders measure the
// same thing: the wait for the limit's permit happens in Ready, which is
// not timed, and the call gives the permit back when it returns, whatever
// the order. In Abandon mode only Timeout > ConcurrencyLimit keeps the
// limit counting what really runs: an abandoned call keeps the permit
// reserved below the Timeout until it returns, so under a
// ConcurrencyLimit(10) no more than 10 handlers run at once, however many
// ignore their context. Under ConcurrencyLimit(10) > Timeout, the permit
// comes back when the Timeout answers the caller, at the deadline, while
// the abandoned handler runs on: the limit then counts the callers waiting
// for an answer rather than the handlers running, and with handlers that
// ignore their context far more than 10 run at once. The same goes for
// any layer that counts what is in flight until the call returns.
//
// # Cost
//
// In Cooperative mode a timed call costs one allocation (its context) and
// two readings of the monotonic clock, and starts no goroutine and no
// timer. The context is lazy: its Err reads the
// clock; its Deadline reads none, and carries a monotonic reading, so that
// a Timeout inside this one compares deadlines without reading the clock
// again (its wall clock part is off by any step of the wall clock since
// the program started); and only when the inner call asks for Done,
// derives a context from it, or asks for the cause of its end does it
// build a standard context with a timer. An inner call that answers
// without looking at its context pays for none of that; one that waits
// pays what context.WithDeadline costs. The context is never reused, so an
// inner call may keep it after it returns: it then reports the call's end
// as a standard context would once cancelled.
package timeout
