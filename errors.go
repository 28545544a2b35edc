package tower

import (
	"errors"
	"time"
)

// Errors are classified by a method that says what kind of failure they
// are, not by who made them, so that code telling failures apart (a
// protocol adapter's status codes, package metrics' outcomes) needs no
// import of the middleware, and a user's own errors classify as soon as
// they have the method.
//
// Each function below looks down err's chain as errors.As does, wrapped and
// joined errors included, for the first error that has the method, and
// returns its answer. An answer of false stands even if a wrapped error
// would say true: an error that wraps a cause of another kind (say, a
// timeout of a store the request never reached) answers false to keep the
// cause's answer from being taken for its own.

// IsTimeout reports whether err says that the request did not get its
// response in the time it was given: whether the first error in its chain
// with a method Timeout() bool answers true, as net.Error,
// context.DeadlineExceeded and os.ErrDeadlineExceeded do.
func IsTimeout(err error) bool {
	e, ok := errors.AsType[timeoutError](err)
	return ok && e.Timeout()
}

// IsOverloaded reports whether err says that the service turned the
// request away before serving any of it, through no fault of the caller's,
// and that it may succeed later (HTTP's 503): whether the first error in
// its chain with a method Overloaded() bool answers true, as
// loadshed.ErrOverloaded does.
func IsOverloaded(err error) bool {
	e, ok := errors.AsType[overloadedError](err)
	return ok && e.Overloaded()
}

// IsThrottled reports whether err says that the caller is over its own
// allowance, a quota per client say, and must slow down (HTTP's 429):
// whether the first error in its chain with a method Throttled() bool
// answers true, as limit.Keyed's *limit.KeyLimitError does.
func IsThrottled(err error) bool {
	e, ok := errors.AsType[throttledError](err)
	return ok && e.Throttled()
}

// IsUnavailable reports whether err says that the service takes no
// requests at all, being closed or broken for good, so the caller should
// go elsewhere or wait for a rebuild: whether the first error in its chain
// with a method Unavailable() bool answers true, as buffer.ErrClosed does.
func IsUnavailable(err error) bool {
	e, ok := errors.AsType[unavailableError](err)
	return ok && e.Unavailable()
}

// RetryAfter reports how long after err the caller may try again, if the
// first error in err's chain with a method RetryAfter() time.Duration
// says so with a positive duration (the time until a rate limit's next
// token, as limit's *KeyLimitError says); otherwise it reports false. An
// HTTP server sends it as Retry-After.
func RetryAfter(err error) (time.Duration, bool) {
	e, ok := errors.AsType[retryAfterError](err)
	if !ok {
		return 0, false
	}
	if d := e.RetryAfter(); d > 0 {
		return d, true
	}
	return 0, false
}

// The behaviours, each one method on top of error, for errors.AsType.
type (
	timeoutError interface {
		error
		Timeout() bool
	}
	overloadedError interface {
		error
		Overloaded() bool
	}
	throttledError interface {
		error
		Throttled() bool
	}
	unavailableError interface {
		error
		Unavailable() bool
	}
	retryAfterError interface {
		error
		RetryAfter() time.Duration
	}
)
