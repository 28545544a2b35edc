// Package timeout fails a call that the inner service has not answered
// within a fixed duration, with [ErrElapsed]. Use [New], or [NewLayer] in
// a stack:
//
//	svc := stack.New[string, string]().
//		Timeout(150 * time.Millisecond).
//		ConcurrencyLimit(10).
//		Service(handler)
//
// The clock starts when the permit is called, never in Ready, as tower's
// starts in call and never in poll_ready. So where the Timeout sits
// decides whether queueing counts: above a ConcurrencyLimit, the wait for
// the limit's permit happens in Ready and does not count; above a Buffer,
// the wait in the queue happens in the call and does. To bound a caller's
// whole wait, Ready included, give the caller's context a deadline.
//
// At the Timeout's deadline the inner call's context ends with
// context.DeadlineExceeded, and cause ErrElapsed (see context.Cause). A
// caller whose own deadline comes at or before the Timeout's governs: the
// inner call gets the caller's context as it is, and the caller gets
// context.DeadlineExceeded, never ErrElapsed. Whichever deadline governs,
// a response that comes back at or after it is discarded and replaced by
// that error: a Timeout never passes on a late response. A caller that
// cancels first cancels the inner call's context; what the inner call
// returns before the deadline is passed on as it is, and after it, the
// caller gets context.Canceled.
//
// The [Mode] says what happens when the inner call ignores its context:
// [Cooperative], the default, waits for it on the caller's goroutine;
// [Abandon] answers at the deadline and leaves it running. A Cooperative
// call costs one allocation, its context, which reads no clock for its
// Deadline and starts a timer only if the inner call asks for Done,
// derives a context or asks for the cause. The context is never reused,
// so an inner call may keep it after it returns.
package timeout
