package reconnect

import (
	"context"
	"errors"

	"github.com/towergo/tower"
)

// ErrClosed is returned by Ready after [Reconnect.Close], and by the Ready
// of callers that were waiting for a connect that Close cancelled.
var ErrClosed = errors.New("reconnect: closed")

// ErrNilService is the error of a connect whose maker returned a nil
// service and no error; it reaches the caller wrapped in a [ConnectError].
var ErrNilService = errors.New("reconnect: maker returned a nil service")

// A ConnectError is returned by the Call of a permit that [Reconnect.Ready]
// returned without a service: the connect failed, or the service it made
// failed its very first readiness check. The request was sent nowhere.
type ConnectError struct {
	// Err is the maker's error, or the readiness error of the service it
	// had just made.
	Err error
}

// Error returns "reconnect: connect failed: " and Err's message.
func (e *ConnectError) Error() string { return "reconnect: connect failed: " + e.Err.Error() }

// Unwrap returns Err.
func (e *ConnectError) Unwrap() error { return e.Err }

// failed serves the permit of a caller whose connect failed: its Call
// returns the error, and it holds nothing.
type failed[Req, Res any] struct{ err *ConnectError }

func failedPermit[Req, Res any](err *ConnectError) tower.Permit[Req, Res] {
	return tower.NewPermit[Req, Res](&failed[Req, Res]{err: err}, 0)
}

func (f *failed[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	var zero Res
	return zero, f.err
}

func (*failed[Req, Res]) ReleaseReserved(uint64) {}
