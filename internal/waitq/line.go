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
// as the package's Wait does.
func (l *Line) Wait(ctx context.Context, w *Waiter, sink metrics.Sink, giveBack func(uint64)) (uint64, error) {
	return Wait(ctx, w, sink, l.withdraw, giveBack)
}

// Wait waits for w to be woken and returns its Value and Err: a grant if
// Err is nil. If ctx ends first, it withdraws w and returns ctx.Err(); an
// outcome that came as ctx ended stands. withdraw takes w out of its
// owner's queues, under the owner's lock, and reports whether it was still
// in them. A sink, if not nil, is told Waiting +1 and -1 around the wait;
// if it panics, w is withdrawn, or what it was granted goes to giveBack,
// before the panic goes on up: the caller then holds nothing.
func Wait(ctx context.Context, w *Waiter, sink metrics.Sink, withdraw func(*Waiter) bool, giveBack func(uint64)) (uint64, error) {
	if sink == nil {
		return wait(ctx, w, withdraw)
	}
	guard.Undo(func() { sink.Add(metrics.Waiting, 1) }, func() {
		if !withdraw(w) && w.Err == nil {
			giveBack(w.Value)
		}
	})
	v, err := wait(ctx, w, withdraw)
	guard.Undo(func() { sink.Add(metrics.Waiting, -1) }, func() {
		if err == nil {
			giveBack(v)
		}
	})
	return v, err
}

func wait(ctx context.Context, w *Waiter, withdraw func(*Waiter) bool) (uint64, error) {
	select {
	case <-w.Ready:
	case <-ctx.Done():
		if withdraw(w) {
			return 0, ctx.Err()
		}
	}
	return w.Value, w.Err
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
