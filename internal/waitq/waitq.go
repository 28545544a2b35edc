// Package waitq is the FIFO queue of parked goroutines behind the limits
// and the Buffer: an intrusive doubly linked list, so that a waiter whose
// context ends leaves from the middle in O(1). A waiter parks on a
// channel, so that under testing/synctest it is durably blocked.
package waitq

// A Waiter is one parked goroutine.
type Waiter struct {
	Ready chan struct{} // sent on by Wake, after it sets Err and Value
	Err   error         // if set, why the waiter was woken without a grant
	Value uint64        // what the waiter was granted, if the owner says

	prev, next *Waiter
	queued     bool
}

// New returns a waiter ready to be pushed. Once its owner has received
// from Ready, it may be pushed again.
func New() *Waiter { return &Waiter{Ready: make(chan struct{}, 1)} }

// Woken reports whether w has been woken and Ready not yet received from.
func (w *Waiter) Woken() bool { return len(w.Ready) > 0 }

// A Queue is a FIFO of waiters. The zero Queue is empty. Its owner guards
// it with a mutex.
type Queue struct {
	head, tail *Waiter
	n          int
}

// Len returns the number of waiters queued.
func (q *Queue) Len() int { return q.n }

// Front returns the oldest waiter, or nil.
func (q *Queue) Front() *Waiter { return q.head }

// Push queues w at the back.
func (q *Queue) Push(w *Waiter) {
	w.prev, w.next, w.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
	q.n++
}

// Remove takes w out of the queue, wherever it is, and reports whether it
// was queued.
func (q *Queue) Remove(w *Waiter) bool {
	if !w.queued {
		return false
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
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
	w.Value, w.Err = value, err
	w.Ready <- struct{}{}
	return true
}
