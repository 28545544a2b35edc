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
// closed. A panic or runtime.Goexit in d's Next ends the discovery, since
// d's state is unknown; the balancer keeps its endpoints, as at io.EOF.
func (b *balancer[K, Req, Res, S]) consume(ctx context.Context, d discover.Discover[K, S]) {
	defer close(b.done)
	where, returned := whereNext, false
	defer func() {
		if !returned { // Next or a handler ended the goroutine with runtime.Goexit
			b.stopped(guard.Recovered(where, recover()))
		}
	}()
	for more := true; more; {
		var ch discover.Change[K, S]
		var err error
		where = whereNext
		if perr := guard.Call(whereNext, func() { ch, err = d.Next(ctx) }); perr != nil {
			b.stopped(perr)
			break
		}
		where = whereHandlers
		if ctx.Err() != nil {
			// Closed while Next returned a change: apply it all the same, so
			// that an endpoint inserted reaches the removal handler.
			more = false
			if err != nil {
				break
			}
		}
		orphan(whereHandlers, func() { more = b.apply(ch, err) && more })
	}
	returned = true
}

// stopped reports the end of the discovery by perr: to the error handler
// for a panic or Goexit in Next, to the log for one in a handler.
func (b *balancer[K, Req, Res, S]) stopped(perr *tower.PanicError) {
	defer b.answer() // the Discover has answered, if only by failing
	if perr.Where == whereNext {
		orphan(whereHandlers, func() { b.report(&DiscoverError{Err: perr}) })
	} else {
		guard.Orphan(perr)
	}
}

// orphan calls f, and logs a panic in it: on the balancer's own goroutines,
// no caller is left to hear of it.
func orphan(where string, f func()) {
	if perr := guard.Call(where, f); perr != nil {
		guard.Orphan(perr)
	}
}
