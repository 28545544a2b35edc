package tower

import (
	"errors"
	"time"
)

// Errors are classified by what they answer, not by who made them: a
// middleware's error has a method that says what kind of failure it is,
// and code that must tell failures apart (an adapter that maps them to a
// protocol's status codes, package metrics' outcomes) asks through the
// functions below. So an error of a user's own middleware is answered the
// same way as the library's, as soon as it has the method, and the code
// that asks needs no import of the middleware whose errors it tells apart.
//
// Each function looks down err's chain as errors.As does, wrapped and
// joined errors included, for the first error that has the method, and
// returns what that error answers. An error whose method answers false
// says that it is not of that kind, even if an error it wraps is: an
// error that wraps a cause of another kind, a timeout of a round trip to
// a store the request never reached, say, answers false to keep the
// cause's answer from being taken for its own.

// IsTimeout reports whether err says that the request ran out of time:
// whether the first error in its chain with a method Timeout() bool
// answers true. That is the method the timeouts of package net have (the
// net.Error interface), and context.DeadlineExceeded and
// os.ErrDeadlineExceeded have it too. An error answers true to say that
// the request did not get its response within the time it was given.
func IsTimeout(err error) bool {
	e, ok := errors.AsType[timeoutError](err)
	return ok && e.Timeout()
}

// IsOverloaded reports whether err says that the service could not take
// the request at that moment, and that the same request may succeed
// later, when load has fallen: whether the first error in its chain with
// a method Overloaded() bool answers true. An error answers true to say
// that the request was turned away before any of it was served, through
// no fault of the caller's, as loadshed.ErrOverloaded does; a server
// answers such a refusal with a status that invites a retry later (HTTP's
// 503).
func IsOverloaded(err error) bool {
	e, ok := errors.AsType[overloadedError](err)
	return ok && e.Overloaded()
}

// IsThrottled reports whether err says that the caller has sent more
// requests than it is allowed to, and must slow down: whether the first
// error in its chain with a method Throttled() bool answers true. Where an
// overloaded service refuses anyone, a throttled caller is refused for
// its own rate, a quota per client for instance, as limit.Keyed's
// *limit.KeyLimitError is; a server answers such a refusal with a status
// that says so (HTTP's 429).
func IsThrottled(err error) bool {
	e, ok := errors.AsType[throttledError](err)
	return ok && e.Throttled()
}

// IsUnavailable reports whether err says that the service cannot take
// requests at all, not only this one: it is closed, or broken for good,
// and the caller should go elsewhere or wait for it to be rebuilt. It
// reports whether the first error in its chain with a method
// Unavailable() bool answers true. An error answers true to say that no
// request will get through that service as it is, as buffer.ErrClosed
// does.
func IsUnavailable(err error) bool {
	e, ok := errors.AsType[unavailableError](err)
	return ok && e.Unavailable()
}

// RetryAfter reports how long after err the caller may try again with a
// good chance of being let in, if the first error in err's chain with a
// method RetryAfter() time.Duration says: the time until a rate limit's
// next token, say, as limit's *KeyLimitError says. A RetryAfter that is
// not positive says nothing, and RetryAfter reports false. An error
// implements the method to tell its caller when to come back; an HTTP
// server sends it as Retry-After.
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
