// Package waitq is how a caller parks behind the limits, the semaphore,
// the adaptive gate and the Buffer: a FIFO Queue, an intrusive doubly
// linked list, so that a waiter whose context ends leaves from the middle
// in O(1), and Wait, the one rule for a parked caller's wait. A waiter
// parks on a channel, so that under testing/synctest it is durably
// blocked.
package waitq

import "time"

// A Waiter is one parked goroutine. It has two links, so that it can be in
// two queues at once: one of all its owner's waiters, and one of those a
// rule applies to (the adaptive gate's waiters with a deadline).
type Waiter struct {
	Ready chan struct{} // sent on by Wake, after it sets Err and Value
	Err   error         // if set, why the waiter was woken without a grant
	Value uint64        // what the waiter was granted, if the owner says
	Since time.Duration // when it began to wait, if the owner says

	// Link k: the waiters before and after it in its queue on link k, and
	// whether it is in one. Arrays, not a struct per link, so that a
	// Waiter fits in 80 bytes.
	prev, next [2]*Waiter
	queued     [2]bool
}

// New returns a waiter ready to be pushed. Once its owner has received
// from Ready, it may be pushed again.
func New() *Waiter { return &Waiter{Ready: make(chan struct{}, 1)} }

// Woken reports whether w has been woken and Ready not yet received from.
func (w *Waiter) Woken() bool { return len(w.Ready) > 0 }

// Wake sets w's Value and Err and wakes it. w must be out of every queue.
func (w *Waiter) Wake(value uint64, err error) {
	w.Value, w.Err = value, err
	w.Ready <- struct{}{}
}

// A Queue is a FIFO of waiters, linked through their first link. The zero
// Queue is empty. Its owner guards it with a mutex.
type Queue struct{ list }

// A SecondQueue is a Queue linked through its waiters' second link, so
// that they can be in a Queue too.
type SecondQueue struct{ list }

// Push queues w at the back.
func (q *Queue) Push(w *Waiter) { q.push(w, 0) }

// Remove takes w out of the queue, wherever it is, and reports whether it
// was queued.
func (q *Queue) Remove(w *Waiter) bool { return q.remove(w, 0) }

// Push queues w at the back.
func (q *SecondQueue) Push(w *Waiter) { q.push(w, 1) }

// Remove takes w out of the queue, wherever it is, and reports whether it
// was queued.
func (q *SecondQueue) Remove(w *Waiter) bool { return q.remove(w, 1) }

// Has reports whether w is in a SecondQueue: in q, if q is the only one
// that w joins.
func (q *SecondQueue) Has(w *Waiter) bool { return w.queued[1] }

// list is a FIFO of waiters; push and remove take k, which of a waiter's
// links it uses.
type list struct {
	head, tail *Waiter
	n          int
}

// Len returns the number of waiters queued.
func (q *list) Len() int { return q.n }

// Front returns the oldest waiter, or nil.
func (q *list) Front() *Waiter { return q.head }

// Back returns the newest waiter, or nil.
func (q *list) Back() *Waiter { return q.tail }

func (q *list) push(w *Waiter, k int) {
	w.prev[k], w.next[k], w.queued[k] = q.tail, nil, true
	if q.tail != nil {
		q.tail.next[k] = w
	} else {
		q.head = w
	}
	q.tail = w
	q.n++
}

func (q *list) remove(w *Waiter, k int) bool {
	if !w.queued[k] {
		return false
	}
	prev, next := w.prev[k], w.next[k]
	if prev != nil {
		prev.next[k] = next
	} else {
		q.head = next
	}
	if next != nil {
		next.prev[k] = prev
	} else {
		q.tail = prev
	}
	w.prev[k], w.next[k], w.queued[k] = nil, nil, false
	q.n--
	return true
}

// Wake removes the oldest waiter, sets its Err and Value, and wakes it, or
// returns false if the queue is empty.
func (q *Queue) Wake(value uint64, err error) bool {
	w := q.head
	if w == nil {
		return false
	}
	q.Remove(w)
	w.Wake(value, err)
	return true
}
