package balance

import (
	"context"

	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/guard"
)

// Where the discovery goroutine runs user code.
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
		if !returned { // a panic in Next, or runtime.Goexit in Next or a handler
			perr := guard.Recovered(where, recover())
			defer b.answer() // the Discover has answered, if only by failing
			if where == whereNext {
				guard.Orphan(guard.Call(whereHandlers, func() { b.report(&DiscoverError{Err: perr}) }))
			} else {
				guard.Orphan(perr)
			}
		}
	}()
	for more := true; more; {
		where = whereNext
		ch, err := d.Next(ctx)
		where = whereHandlers
		if ctx.Err() != nil {
			// Closed while Next returned a change: apply it all the same, so
			// that an endpoint inserted reaches the removal handler.
			more = false
			if err != nil {
				break
			}
		}
		guard.Orphan(guard.Call(whereHandlers, func() { more = b.apply(ch, err) && more }))
	}
	returned = true
}
