// Package timeout fails a call that the inner service has not answered
// within a fixed duration, with [ErrElapsed] ("request timed out"). Use
// [New], or [NewLayer] in a stack:
//
//	svc := stack.New[string, string]().
//		Timeout(150 * time.Millisecond).
//		ConcurrencyLimit(10).
//		Service(handler)
//
// # What is timed
//
// The clock starts when the permit is called, never in Ready, as tower's
// starts in call and never in poll_ready. So where the Timeout sits
// decides whether queueing counts: above a ConcurrencyLimit, the wait for
// the limit's permit happens in Ready and does not count; above a Buffer,
// the wait in the queue happens in the call and does. To bound a caller's
// whole wait, Ready included, give the caller's context a deadline.
//
// # Errors
//
// ErrElapsed means this Timeout's deadline came first. At that deadline
// the inner call's context ends with context.DeadlineExceeded, and cause
// ErrElapsed (see context.Cause). A caller whose own deadline comes at or
// before the Timeout's governs: the inner call gets the caller's context
// as it is, and the caller gets context.DeadlineExceeded, never
// ErrElapsed.
//
// Whichever deadline governs, a response that comes back at or after it
// is discarded and replaced by that error: a Timeout never passes on a
// late response. A caller that cancels first cancels the inner call's
// context; what the inner call returns before the deadline is passed on
// as it is, and after it, the caller gets context.Canceled.
//
// # Modes
//
// [Cooperative], the default, runs the inner call on the caller's
// goroutine and answers when it returns: against an inner call that
// ignores its context and takes 300ms, a Timeout of 100ms answers
// ErrElapsed at 300ms. It starts no goroutine, and what the call held
// below the Timeout is given back before the caller hears. [Abandon]
// answers at 100ms, like net/http's TimeoutHandler, from a goroutine per
// call; the abandoned call keeps what it reserved below the Timeout until
// it returns, so put an Abandon Timeout above the limits (Timeout >
// ConcurrencyLimit), which then count what really runs. Choose the mode
// with [WithMode].
//
// # Cost
//
// A Cooperative call costs one allocation, its context, and two readings
// of the monotonic clock (the start, and the end, to tell a late
// response). The context is lazy: its Deadline reads no clock, and only
// an inner call that asks for Done, derives a context or asks for the
// cause builds a standard context with a timer. The context is never
// reused, so an inner call may keep it after it returns.
package timeout
