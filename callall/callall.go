package callall

import (
	"context"
	"fmt"
	"iter"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// Ordered sends each request of reqs through svc and yields the responses
// in the order of the requests, with at most limit requests out at once
// (see the package doc). A limit above [MaxLimit] counts as MaxLimit.
// Ordered panics if svc (a typed nil too) or reqs is nil, or limit is
// below 1.
func Ordered[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], reqs iter.Seq[Req], limit int) iter.Seq2[Res, error] {
	return all(ctx, "callall.Ordered", svc, fromSeq(reqs), reqs == nil, limit, true)
}

// Unordered is [Ordered], except that it yields each response as soon as
// it comes, whatever the order of the requests.
func Unordered[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], reqs iter.Seq[Req], limit int) iter.Seq2[Res, error] {
	return all(ctx, "callall.Unordered", svc, fromSeq(reqs), reqs == nil, limit, false)
}

// OrderedChan is [Ordered] over the requests received from reqs, until it
// is closed or ctx ends. A loop that ends early leaves the rest in reqs.
func OrderedChan[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], reqs <-chan Req, limit int) iter.Seq2[Res, error] {
	return all(ctx, "callall.OrderedChan", svc, fromChan(reqs), reqs == nil, limit, true)
}

// UnorderedChan is [Unordered] over the requests received from reqs, as
// [OrderedChan] is.
func UnorderedChan[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], reqs <-chan Req, limit int) iter.Seq2[Res, error] {
	return all(ctx, "callall.UnorderedChan", svc, fromChan(reqs), reqs == nil, limit, false)
}

// MaxLimit is the largest number of requests a call-all has out at once; a
// larger limit, up to math.MaxInt, counts as MaxLimit, so a caller can say
// "no limit". A run allocates its queues for limit requests when it starts.
const MaxLimit = 1 << 16

// A source gives the requests of one run; ctx ends when the run does.
type source[Req any] func(ctx context.Context) iter.Seq[Req]

func fromSeq[Req any](reqs iter.Seq[Req]) source[Req] {
	return func(context.Context) iter.Seq[Req] { return reqs }
}

func fromChan[Req any](reqs <-chan Req) source[Req] {
	return func(ctx context.Context) iter.Seq[Req] {
		return func(yield func(Req) bool) {
			for ctx.Err() == nil {
				select {
				case req, ok := <-reqs:
					if !ok || !yield(req) {
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

// all returns the sequence of one of the four variants, fn, once it has
// checked their arguments.
func all[Req, Res any](ctx context.Context, fn string, svc tower.Service[Req, Res], src source[Req], nilReqs bool, limit int, ordered bool) iter.Seq2[Res, error] {
	if isnil.Is(svc) {
		panic(fn + ": svc is nil")
	}
	if nilReqs {
		panic(fn + ": reqs is nil")
	}
	if limit < 1 { // not PanicIf: its arguments would be boxed on every call
		panic(fmt.Sprintf("%s: limit must be at least 1, got %d", fn, limit))
	}
	limit = min(limit, MaxLimit)
	return func(yield func(Res, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		r := &run[Req, Res]{
			ctx: ctx, svc: svc, ordered: ordered, limit: limit,
			free:    make(chan *record[Req, Res], limit),
			work:    make(chan *record[Req, Res], limit),
			out:     make(chan *record[Req, Res], limit),
			stopped: make(chan struct{}),
		}
		go r.dispatch(src(ctx))
		defer func() {
			cancel()
			<-r.stopped
			r.calls.Wait()
			r.orphans()
		}()
		r.consume(yield)
	}
}
