package load

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Completion decides when a request stops counting in its endpoint's
// load: tower's TrackCompletion. For a response whose real end comes
// later, such as a body streamed after the headers, it moves the request's
// [Handle] into the response and marks it done when the body has been
// read. Using one allocates the Handle per request. A Completion must be
// safe for concurrent use. Res is the response type.
type Completion[Res any] interface {
	// Track is called with each response that comes back without an
	// error, and the request's Handle, and returns the response the caller
	// gets. It must see that h.Done is called, now or later. A call that
	// fails is done when it returns, without Track.
	Track(h *Handle, res Res) Res
}

// A Handle is one request counted in its endpoint's load until Done. A
// [Completion] receives it with the response. It is safe for concurrent
// use.
type Handle struct {
	done atomic.Bool
	c    completer
	sent time.Time
}

// Done marks the request complete: it stops counting as pending, and for a
// [PeakEwma] its round trip ends now. Calls after the first do nothing.
func (h *Handle) Done() {
	if h.done.CompareAndSwap(false, true) {
		h.c.complete(h.sent)
	}
}

// completer is the load metric a Handle reports to.
type completer interface {
	complete(sent time.Time)
}

// callTracked is a call under comp: the request is complete when comp says
// so, or when the call fails or panics.
func callTracked[Req, Res any](ctx context.Context, inner tower.Permit[Req, Res], req Req, comp Completion[Res], c completer, sent time.Time) (Res, error) {
	h := &Handle{c: c, sent: sent}
	handed := false
	defer func() {
		if !handed {
			h.Done()
		}
	}()
	res, err := inner.Call(ctx, req)
	if err != nil {
		return res, err
	}
	res = comp.Track(h, res)
	handed = true
	return res, nil
}

// An Option configures a [PendingRequests] or a [PeakEwma]. Res is the
// response type.
type Option[Res any] func(*options[Res])

type options[Res any] struct {
	completion Completion[Res]
}

// WithCompletion makes a request count as pending until c says it is done,
// instead of until its Call returns. It panics if c is nil or holds a nil
// pointer.
func WithCompletion[Res any](c Completion[Res]) Option[Res] {
	option.PanicIf(isnil.Is(c), "load.WithCompletion: nil Completion")
	return func(o *options[Res]) { o.completion = c }
}

func newOptions[Res any](fn string, opts []Option[Res]) options[Res] {
	return option.Apply[options[Res]](fn, opts)
}
