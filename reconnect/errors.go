package reconnect

import (
	"context"
	"errors"

	"github.com/towergo/tower"
)

// ErrClosed is returned by Ready once the Reconnect is closed.
var ErrClosed = errors.New("reconnect: closed")

// ErrNilService is the error of a connect whose maker returned a nil
// service and no error; it reaches the caller wrapped in a [ConnectError].
var ErrNilService = errors.New("reconnect: maker returned a nil service")

// A ConnectError is returned by the Call of the permits of a failed
// connect (see the package doc); the request was sent nowhere.
type ConnectError struct {
	// Err is the maker's error, or the readiness error of the service it
	// had just made.
	Err error
}

// Error returns "reconnect: connect failed: " and Err's message.
func (e *ConnectError) Error() string { return "reconnect: connect failed: " + e.Err.Error() }

// Unwrap returns Err.
func (e *ConnectError) Unwrap() error { return e.Err }

// failedPermit is the permit of a caller whose connect failed: its Call
// returns err, and it holds nothing.
func failedPermit[Req, Res any](err *ConnectError) tower.Permit[Req, Res] {
	p, _ := tower.ServiceFunc[Req, Res](func(context.Context, Req) (res Res, _ error) {
		return res, err
	}).Ready(context.Background())
	return p
}
