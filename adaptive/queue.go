package adaptive

import "time"

// A waiter is a caller waiting in Ready for a permit. It is in its class's
// queue of all waiters and, if its ctx has a deadline, in its class's
// queue of those the wait bound applies to.
type waiter struct {
	// ready is closed when the waiter is granted permit seq, or refused.
	ready   chan struct{}
	seq     uint64
	refused bool

	since time.Duration // mono reading when it began to wait
	links [2]link       // in the queue of all, and in that of the bounded
}

type link struct {
	prev, next *waiter
	queued     bool
}

// The links of a waiter: k of a waitList.
const (
	allLink     = 0 // the queue of all a class's waiters
	boundedLink = 1 // the queue of those with a deadline
)

// waitList is a queue of waiters, oldest first. Its methods take k, which
// of a waiter's links the queue uses.
type waitList struct {
	head, tail *waiter
	n          int // waiters queued
}

func (q *waitList) push(w *waiter, k int) {
	l := &w.links[k]
	l.prev, l.next, l.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.links[k].next = w
	} else {
		q.head = w
	}
	q.tail = w
	q.n++
}

// remove takes w out of the queue, and reports whether it was in it.
func (q *waitList) remove(w *waiter, k int) bool {
	l := &w.links[k]
	if !l.queued {
		return false
	}
	if l.prev != nil {
		l.prev.links[k].next = l.next
	} else {
		q.head = l.next
	}
	if l.next != nil {
		l.next.links[k].prev = l.prev
	} else {
		q.tail = l.prev
	}
	*l = link{}
	q.n--
	return true
}
