package tower

import (
	"errors"
	"time"
)

// Errors are classified by a method that says what kind of failure they
// are, not by who made them, so that code telling failures apart (a
// protocol adapter's status codes, package metrics' outcomes) needs no
// import of the middleware, and a user's own error classifies once it has
// the method.
//
// Each function below answers for the first error in err's chain (as
// errors.As walks it, joined errors included) that has its method. An
// answer of false stands even if a wrapped error would say true: an error
// that wraps a cause of another kind (a timeout of a store the request
// never reached) keeps the cause's answer from being taken for its own.

// IsTimeout reports whether err says, by a method Timeout() bool, that the
// request did not get its response in the time it was given, as net.Error,
// context.DeadlineExceeded and os.ErrDeadlineExceeded do.
func IsTimeout(err error) bool {
	e, ok := errors.AsType[timeoutError](err)
	return ok && e.Timeout()
}

// IsOverloaded reports whether err says, by a method Overloaded() bool,
// that the service turned the request away before serving any of it,
// through no fault of the caller's, and that it may succeed later (HTTP's
// 503), as loadshed.ErrOverloaded does.
func IsOverloaded(err error) bool {
	e, ok := errors.AsType[overloadedError](err)
	return ok && e.Overloaded()
}

// IsThrottled reports whether err says, by a method Throttled() bool, that
// the caller is over its own allowance, a quota per client say, and must
// slow down (HTTP's 429), as limit's *KeyLimitError does.
func IsThrottled(err error) bool {
	e, ok := errors.AsType[throttledError](err)
	return ok && e.Throttled()
}

// IsUnavailable reports whether err says, by a method Unavailable() bool,
// that the service takes no requests at all, being closed or broken for
// good, so the caller should go elsewhere or wait for a rebuild, as
// buffer.ErrClosed does.
func IsUnavailable(err error) bool {
	e, ok := errors.AsType[unavailableError](err)
	return ok && e.Unavailable()
}

// RetryAfter reports how long after err the caller may try again, if err
// says so by a method RetryAfter() time.Duration with a positive duration
// (the time until a rate limit's next token, as limit's *KeyLimitError
// says); otherwise it reports false. An HTTP server sends it as
// Retry-After.
func RetryAfter(err error) (time.Duration, bool) {
	if e, ok := errors.AsType[retryAfterError](err); ok {
		if d := e.RetryAfter(); d > 0 {
			return d, true
		}
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
