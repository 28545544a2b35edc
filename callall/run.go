package callall

import (
	"context"
	"iter"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// run is one range over a call-all sequence, shared by the dispatcher
// goroutine (takes requests, waits for readiness, hands permits to the
// workers), the workers (make the calls) and the consumer (the goroutine
// ranging over the sequence, which yields responses).
//
// A record carries one request from the dispatcher to a worker and its
// response to the consumer, and goes back to free once the loop body is
// done with it. There are at most limit records, and a worker per record,
// both made as needed: taking a record is the in-flight limit, and no send
// on the record channels ever blocks. Reusing records keeps the request
// path free of allocations.
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
	made     int    // records, and workers, made so far
	issued   int    // requests sent
	err      error  // why the dispatcher stopped before reqs ended
	panicked bool   // err is a panic the dispatcher recovered
	in       string // the user code the dispatcher runs

	reported bool // the consumer has yielded err
}

type record[Req, Res any] struct {
	p        tower.Permit[Req, Res]
	req      Req
	res      Res
	err      error
	done     chan struct{} // ordered: signalled when the call has returned
	panicked bool          // err is a panic the worker recovered
}

// The PanicError's Where for user code the run calls.
const (
	inIterator = "the request iterator, on a callall dispatcher"
	inReady    = "the service's Ready, on a callall dispatcher"
	inRelease  = "the release of the service's permit, on a callall dispatcher"
	inCall     = "the service's Call, on a callall worker"
)

// dispatch is the dispatcher goroutine. A panic or runtime.Goexit in the
// user code it runs ends the run as a failed Ready does; if the run had
// stopped already and the iterator panicked on its way out, nobody will
// hear of it, and it is logged.
func (r *run[Req, Res]) dispatch(reqs iter.Seq[Req]) {
	returned := false
	defer func() {
		if !returned {
			perr := guard.Recovered(r.in, recover())
			if r.err != nil {
				guard.Orphan(perr)
			} else {
				r.err, r.panicked = perr, true
			}
		}
		close(r.work)
		close(r.stopped)
	}()
	r.in = inIterator
	r.sendAll(reqs)
	returned = true
}

// sendAll sends the requests of reqs until they end or one cannot be sent.
// It takes a free record before the next request, so that if the run ends,
// later requests stay where they are, in a channel.
func (r *run[Req, Res]) sendAll(reqs iter.Seq[Req]) {
	rec := r.record()
	if rec == nil {
		return
	}
	for req := range reqs {
		if !r.send(rec, req) {
			return
		}
		if rec = r.record(); rec == nil {
			return
		}
	}
	r.err = r.ctx.Err() // a channel's requests end when ctx does
}

// send waits for svc's readiness and hands req, with rec, to a worker. It
// returns false, with r.err set, if svc failed (a panic in its Ready is a
// failure) or ctx ended. If Ready calls runtime.Goexit, dispatch, told by
// r.in, reports it.
func (r *run[Req, Res]) send(rec *record[Req, Res], req Req) bool {
	var (
		p   tower.Permit[Req, Res]
		err error
	)
	r.in = inReady
	if perr := guard.Call(inReady, func() { p, err = r.svc.Ready(r.ctx) }); perr != nil {
		err, r.panicked = perr, true
	} else if err == nil && r.ctx.Err() != nil {
		// Capacity is granted even to a done ctx; the run is over anyway.
		err, r.in = r.ctx.Err(), inRelease
		p.Release()
	}
	r.in = inIterator
	if err != nil {
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

// record returns a free record, making one (and its worker) if fewer than
// limit exist, or nil, with r.err set, if ctx ends first.
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
		r.err = r.ctx.Err()
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

// call makes rec's call and hands the response to the consumer. A panic
// in the call, or runtime.Goexit, is the response's error. Goexit ends the
// worker, so another takes its place: every record handed to the workers
// must find one.
func (r *run[Req, Res]) call(rec *record[Req, Res]) {
	returned := false
	defer func() {
		if !returned {
			v := recover()
			var zero Res
			rec.res, rec.err, rec.panicked = zero, guard.Recovered(inCall, v), true
			if v == nil {
				r.calls.Add(1) // before this worker's Done: Wait cannot return in between
				go r.worker()
			}
			r.answer(rec)
		}
	}()
	rec.res, rec.err = rec.p.Call(r.ctx, rec.req)
	returned = true
	r.answer(rec)
}

// answer hands rec, whose call has returned, to the consumer.
func (r *run[Req, Res]) answer(rec *record[Req, Res]) {
	var zero Req
	rec.req = zero
	if r.ordered {
		rec.done <- struct{}{}
	} else {
		r.out <- rec
	}
}

// orphans logs, once the run is over, the recovered panics no caller heard
// of because the loop ended early: the dispatcher's, and those in unread
// responses (an ordered consumer leaves only right after a yield, holding
// no record).
func (r *run[Req, Res]) orphans() {
	if r.panicked && !r.reported {
		guard.Orphan(r.err.(*tower.PanicError))
	}
	for {
		select {
		case rec := <-r.out:
			if rec.panicked {
				guard.Orphan(rec.err.(*tower.PanicError))
			}
		default:
			return
		}
	}
}

// consume yields responses until every request sent has been answered and
// the dispatcher has stopped, or until yield returns false. The
// dispatcher's error is yielded as soon as it is known.
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
			if r.err != nil {
				r.reported = true
				if !yield(zero, r.err) {
					return
				}
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
		rec.res, rec.err, rec.panicked = zero, nil, false
		yielded++
		if !yield(res, err) {
			return
		}
		r.free <- rec // only now: the limit counts the loop body's response
	}
}
