package waitq

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// A Line is a Queue under a mutex, with a count of its waiters that a
// lock-free fast path reads, so that a newcomer never overtakes someone
// waiting: the line of a limit that grants one unit at a time (a token, a
// place in a window). The limit holds the lock to look for a free unit, to
// Join and to Serve; a waiter then calls Wait without it. The zero Line is
// ready to use.
type Line struct {
	sync.Mutex
	q      Queue
	queued atomic.Int32
}

// Len returns the number of waiters; without the lock, a hint.
func (l *Line) Len() int { return int(l.queued.Load()) }

// Join puts a new waiter at the back of the line. l must be locked.
func (l *Line) Join() *Waiter {
	w := New()
	l.q.Push(w)
	l.queued.Add(1)
	return w
}

// Serve grants the oldest waiter, if any, the unit v, and reports whether
// there was one. l must be locked.
func (l *Line) Serve(v uint64) bool {
	if !l.q.Wake(v, nil) {
		return false
	}
	l.queued.Add(-1)
	return true
}

// Wait waits, without l's lock, until w is served, and returns its unit,
// or takes w out of the line when ctx ends and returns ctx.Err(). A unit
// served as ctx ended is kept. A sink, if not nil, is told Waiting +1 and
// -1 around the wait; if it panics, w leaves the line, or its unit goes to
// giveBack, before the panic goes on up.
func (l *Line) Wait(ctx context.Context, w *Waiter, sink metrics.Sink, giveBack func(uint64)) (uint64, error) {
	if sink == nil {
		return l.wait(ctx, w)
	}
	guard.Undo(func() { sink.Add(metrics.Waiting, 1) }, func() {
		if !l.withdraw(w) {
			giveBack(w.Value)
		}
	})
	v, err := l.wait(ctx, w)
	guard.Undo(func() { sink.Add(metrics.Waiting, -1) }, func() {
		if err == nil {
			giveBack(v)
		}
	})
	return v, err
}

func (l *Line) wait(ctx context.Context, w *Waiter) (uint64, error) {
	select {
	case <-w.Ready:
		return w.Value, nil
	case <-ctx.Done():
	}
	if !l.withdraw(w) {
		return w.Value, nil
	}
	return 0, ctx.Err()
}

// withdraw takes w out of the line, or reports false if it was served.
func (l *Line) withdraw(w *Waiter) bool {
	l.Lock()
	defer l.Unlock()
	if !l.q.Remove(w) {
		return false
	}
	l.queued.Add(-1)
	return true
}
