package callall

import (
	"context"
	"iter"
	"sync"

	"github.com/towergo/tower"
)

// run is one range over a call-all sequence. Three parties share it: the
// dispatcher goroutine, which takes requests, waits for readiness and
// hands the permits to the workers; the workers, which make the calls; and
// the consumer, the goroutine ranging over the sequence, which yields
// responses.
//
// A record carries one request from the dispatcher to a worker and its
// response to the consumer, and goes back to free once the loop body is
// done with it. There are at most limit records, and one worker per
// record, both made as needed: taking a record is the in-flight limit, a
// record handed to the workers always finds one, and no channel send on
// records ever blocks. Reusing records and workers keeps the request path
// free of allocations.
type run[Req, Res any] struct {
	ctx     context.Context // ended when the run ends, or by the caller's ctx
	svc     tower.Service[Req, Res]
	ordered bool
	limit   int

	free chan *record[Req, Res] // records yielded, to reuse
	work chan *record[Req, Res] // records to call, for the workers
	// out carries records to the consumer: in request order, before the
	// call, when ordered; as their calls return, when not.
	out     chan *record[Req, Res]
	stopped chan struct{}  // closed when the dispatcher has returned
	calls   sync.WaitGroup // the workers

	// Written by the dispatcher only; read by the consumer after stopped.
	made   int   // records, and workers, made so far
	issued int   // requests sent
	err    error // why the dispatcher stopped before reqs ended
}

type record[Req, Res any] struct {
	p    tower.Permit[Req, Res]
	req  Req
	res  Res
	err  error
	done chan struct{} // ordered: signalled when the call has returned
}

func newRun[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], limit int, ordered bool) *run[Req, Res] {
	return &run[Req, Res]{
		ctx:     ctx,
		svc:     svc,
		ordered: ordered,
		limit:   limit,
		free:    make(chan *record[Req, Res], limit),
		work:    make(chan *record[Req, Res], limit),
		out:     make(chan *record[Req, Res], limit),
		stopped: make(chan struct{}),
	}
}

// dispatch sends the requests of reqs, one at a time, until they end or
// one cannot be sent. It takes a free record before it takes the next
// request, so that a request is taken only when it can be sent at once
// (once the service is ready): the requests that come later stay where
// they are, in a channel, if the run ends.
func (r *run[Req, Res]) dispatch(reqs iter.Seq[Req]) {
	defer close(r.stopped)
	defer close(r.work)
	rec := r.record()
	if rec == nil {
		r.err = r.ctx.Err()
		return
	}
	for req := range reqs {
		if !r.send(rec, req) {
			return
		}
		if rec = r.record(); rec == nil {
			r.err = r.ctx.Err()
			return
		}
	}
	r.free <- rec
	// A channel's requests end when ctx does.
	r.err = r.ctx.Err()
}

// send waits for svc's readiness and hands req, with rec, to a worker. It
// returns false, with r.err set, if svc failed or ctx ended.
func (r *run[Req, Res]) send(rec *record[Req, Res], req Req) bool {
	p, err := r.svc.Ready(r.ctx)
	if err == nil {
		// Capacity is granted even to a done ctx; the run is over anyway.
		if err = r.ctx.Err(); err != nil {
			p.Release()
		}
	}
	if err != nil {
		r.free <- rec
		r.err = err
		return false
	}
	rec.p, rec.req = p, req
	r.issued++
	if r.ordered {
		r.out <- rec
	}
	r.work <- rec
	return true
}

// record returns a free record, waiting for one if limit are out, or nil
// if ctx ends first.
func (r *run[Req, Res]) record() *record[Req, Res] {
	select {
	case rec := <-r.free:
		return rec
	default:
	}
	if r.made < r.limit {
		r.made++
		r.calls.Add(1)
		go r.worker()
		rec := &record[Req, Res]{}
		if r.ordered {
			rec.done = make(chan struct{}, 1)
		}
		return rec
	}
	select {
	case rec := <-r.free:
		return rec
	case <-r.ctx.Done():
		return nil
	}
}

// worker makes the calls handed to it until the dispatcher stops.
func (r *run[Req, Res]) worker() {
	defer r.calls.Done()
	for rec := range r.work {
		r.call(rec)
	}
}

// call makes rec's call and hands the response to the consumer.
func (r *run[Req, Res]) call(rec *record[Req, Res]) {
	rec.res, rec.err = rec.p.Call(r.ctx, rec.req)
	var zero Req
	rec.req = zero
	if r.ordered {
		rec.done <- struct{}{}
	} else {
		r.out <- rec
	}
}

// consume yields responses until every request sent has been answered and
// the dispatcher has stopped, or until yield returns false. The
// dispatcher's error, if any, is yielded as soon as it is known.
func (r *run[Req, Res]) consume(yield func(Res, error) bool) {
	var (
		zero    Res
		stopped = r.stopped // nil once the dispatcher's end has been seen
		head    *record[Req, Res]
		yielded int
	)
	for {
		select {
		case <-stopped:
			stopped = nil
			if r.err != nil && !yield(zero, r.err) {
				return
			}
		default:
		}
		if stopped == nil && yielded == r.issued {
			return
		}
		var rec *record[Req, Res]
		if r.ordered {
			if head == nil {
				select {
				case head = <-r.out:
				case <-stopped:
					continue
				}
			}
			select {
			case <-head.done:
				rec, head = head, nil
			case <-stopped:
				continue
			}
		} else {
			select {
			case rec = <-r.out:
			case <-stopped:
				continue
			}
		}
		res, err := rec.res, rec.err
		rec.res, rec.err = zero, nil
		yielded++
		if !yield(res, err) {
			return
		}
		// Only now: the limit counts the response the loop body is
		// working on, so a loop that falls behind holds requests back.
		r.free <- rec
	}
}
