package tower

import (
	"errors"
	"time"
)

// Errors are classified by what they answer, not by who made them: a
// middleware's error has a method that says what kind of failure it is,
// and the adapters (package towerhttp's status codes, package towergrpc's
// status codes, package metrics' outcomes) ask through the functions
// below. So an error of a user's own middleware is answered the same way
// as the library's, as soon as it has the method, and an adapter needs no
// import of the middleware whose errors it maps.
//
// Each function looks down err's chain as errors.As does, wrapped and
// joined errors included, for the first error that has the method, and
// returns what that error answers. An error whose method answers false
// says that it is not of that kind, even if an error it wraps is.

// IsTimeout reports whether err says that the request ran out of time:
// whether the first error in its chain with a method Timeout() bool
// answers true. That is the method the timeouts of package net have (the
// net.Error interface), and context.DeadlineExceeded and
// os.ErrDeadlineExceeded have it too. In this module, timeout.ErrElapsed
// answers it: the request did not get its response within a Timeout's
// duration.
func IsTimeout(err error) bool {
	e, ok := errors.AsType[timeoutError](err)
	return ok && e.Timeout()
}

// IsOverloaded reports whether err says that the service could not take
// the request at that moment, and that the same request may succeed
// later, when load has fallen: whether the first error in its chain with
// a method Overloaded() bool answers true. The request was turned away
// before any of it was served. In this module, loadshed.ErrOverloaded and
// throttle.ErrThrottled answer it. Package towerhttp answers such an error with 503 and
// Retry-After, and package towergrpc with codes.ResourceExhausted.
func IsOverloaded(err error) bool {
	e, ok := errors.AsType[overloadedError](err)
	return ok && e.Overloaded()
}

// IsThrottled reports whether err says that the caller has sent more
// requests than it is allowed to, and must slow down: whether the first
// error in its chain with a method Throttled() bool answers true. Where an
// overloaded service refuses anyone, a throttled caller is refused for
// its own rate, a quota per client for instance. In this module,
// throttle.ErrThrottled answers it: a client that sends more than its
// backend accepts refuses its own requests (limit.Rate makes callers wait
// rather than refusing them). Package towerhttp answers
// such an error with 429 and Retry-After, and package towergrpc with
// codes.ResourceExhausted.
func IsThrottled(err error) bool {
	e, ok := errors.AsType[throttledError](err)
	return ok && e.Throttled()
}

// IsUnavailable reports whether err says that the service cannot take
// requests at all, not only this one: it is closed, or broken for good,
// and the caller should go elsewhere or wait for it to be rebuilt. It
// reports whether the first error in its chain with a method
// Unavailable() bool answers true. In this module, buffer.ErrClosed and
// *buffer.ServiceError (a closed Buffer, and one whose inner service
// failed), balance.ErrNoEndpoints and balance.ErrClosed (a balancer with
// nothing to send to) and *towerhttp.ReadyError (a stack whose Ready
// failed) answer it. Package towerhttp answers such an error with 503 and
// Retry-After, and package towergrpc with codes.Unavailable.
func IsUnavailable(err error) bool {
	e, ok := errors.AsType[unavailableError](err)
	return ok && e.Unavailable()
}

// RetryAfter reports how long after err the caller may try again with a
// good chance of being let in, if the first error in err's chain with a
// method RetryAfter() time.Duration says: the time until a rate limit's
// next token, say. A RetryAfter that is not positive says nothing, and
// RetryAfter reports false. In this module, *limit.KeyLimitError and
// *towerredis.LimitedError say it. Package towerhttp sends it as the
// Retry-After of a 503 or 429, in place of the Handler's fixed one.
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
