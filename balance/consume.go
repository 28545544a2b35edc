package balance

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/guard"
)

// Where the discovery goroutine runs user code. With no caller to hand a
// panic to, a panic in Next is reported to the error handler, one in a
// handler is logged.
const (
	whereNext     = "the Discover's Next, on a balancer's discovery goroutine"
	whereHandlers = "the error or removal handler, on a balancer's discovery goroutine"
)

// consume applies d's changes until d ends, panics, or the balancer is
// closed. A panic or runtime.Goexit in d's Next is reported as a
// DiscoverError of its PanicError and ends the discovery, since d's state
// is unknown; the balancer keeps its endpoints, as at io.EOF.
func (b *balancer[K, Req, Res, S]) consume(ctx context.Context, d discover.Discover[K, S]) {
	defer close(b.done)
	where, returned := whereNext, false
	defer func() {
		if !returned { // Next or a handler ended the goroutine with runtime.Goexit
			b.stopped(guard.Recovered(where, recover()))
		}
	}()
	for {
		where = whereNext
		ch, perr, err := next(ctx, d)
		where = whereHandlers
		if perr != nil {
			b.stopped(perr)
			break
		}
		if ctx.Err() != nil {
			if err == nil {
				// Closed while Next returned a change: apply it all the same,
				// so that an endpoint inserted reaches the removal handler.
				b.applyOrLog(ch, nil)
			}
			break
		}
		if !b.applyOrLog(ch, err) {
			break
		}
	}
	returned = true
}

// next calls d.Next, and returns a panic in it as a PanicError.
func next[K comparable, S any](ctx context.Context, d discover.Discover[K, S]) (ch discover.Change[K, S], perr *tower.PanicError, err error) {
	returned := false
	defer func() {
		if !returned {
			perr = guard.Recovered(whereNext, recover())
		}
	}()
	ch, err = d.Next(ctx)
	returned = true
	return ch, nil, err
}

// applyOrLog is apply, with a panic in a handler logged: the discovery
// goes on.
func (b *balancer[K, Req, Res, S]) applyOrLog(ch discover.Change[K, S], err error) (more bool) {
	more = true
	perr := guard.Call(whereHandlers, func() { more = b.apply(ch, err) })
	if perr != nil {
		guard.Orphan(perr)
	}
	return more
}

// stopped reports the end of the discovery by perr: to the error handler
// for a panic or Goexit in Next, to the log for one in a handler.
func (b *balancer[K, Req, Res, S]) stopped(perr *tower.PanicError) {
	defer b.answer() // the Discover has answered, if only by failing
	if perr.Where != whereNext {
		guard.Orphan(perr)
		return
	}
	perr2 := guard.Call(whereHandlers, func() { b.report(&DiscoverError{Err: perr}) })
	if perr2 != nil {
		guard.Orphan(perr2)
	}
}
