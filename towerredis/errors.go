package towerredis

import (
	"context"
	"errors"
	"fmt"

	"github.com/towergo/tower"
)

// ErrUnreachable is what an [*UnreachableError] matches with errors.Is.
var ErrUnreachable = errors.New("towerredis: Redis unreachable")

// An UnreachableError is the error of a request that a [FailClosed] limit
// refused because Redis did not answer in time, or answered with an error.
// It wraps [ErrUnreachable] and Err, and answers [tower.IsOverloaded] only:
// the caller did nothing wrong, and only the round trip timed out.
type UnreachableError struct {
	// Name is the limit's name.
	Name string
	// Err is the round trip's: context.DeadlineExceeded, or the client's.
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("towerredis: limit %q: Redis unreachable, failing closed: %v", e.Name, e.Err)
}

// Unwrap returns ErrUnreachable and Err.
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// Overloaded answers true: see [tower.IsOverloaded].
func (e *UnreachableError) Overloaded() bool { return true }

// Throttled answers false: see [tower.IsThrottled].
func (e *UnreachableError) Throttled() bool { return false }

// Timeout answers false, even if Err is a timeout: see [tower.IsTimeout].
func (e *UnreachableError) Timeout() bool { return false }

// ErrBadReply is wrapped by the error of a round trip whose answer was not
// what the limit's script returns (a key of another type, say). Such an
// answer never grants anything, whatever the [FailMode].
var ErrBadReply = errors.New("towerredis: unexpected reply from Redis")

// ErrEmptyKey is the error of a [Keyed]'s Call whose key function
// returned "".
var ErrEmptyKey = errors.New("towerredis: the key function returned an empty key")

// refuse returns a permit whose Call fails with err and whose Release does
// nothing, for a FailClosed limit's Ready when Redis does not answer.
func refuse[Req, Res any](err *UnreachableError) tower.Permit[Req, Res] {
	r := &refusal[Req, Res]{err: err}
	return tower.NewPermit[Req, Res](r, r.Token())
}

// refusal serves refuse's permit; its Ticket refuses a second Call.
type refusal[Req, Res any] struct {
	tower.Ticket
	err error
}

func (r *refusal[Req, Res]) CallReserved(_ context.Context, token uint64, _ Req) (Res, error) {
	r.MustRedeem(token)
	var zero Res
	return zero, r.err
}

func (r *refusal[Req, Res]) ReleaseReserved(token uint64) { r.Redeem(token) }
