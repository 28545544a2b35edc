package buffer

import "sync"

// minRing is the capacity a queue's ring starts at when the first request
// is queued, and shrinks back to as the worker drains it: the most memory
// an idle Buffer's queue holds (16 messages of 32 bytes), whatever its
// bound.
const minRing = 16

// queue holds the messages for a Buffer's worker, in order. Its memory
// follows what is queued, not the bound (which the slots keep): a ring
// that grows by doubling when a message finds it full, and halves when the
// worker leaves it a quarter full, down to minRing. An idle queue that was
// never used holds no ring at all.
//
// The worker waits for a message on wake, a channel, and the mutex is held
// only to move a message in or out: in a testing/synctest bubble a
// goroutine blocked on a channel is durably blocked, and one parked on a
// mutex (or a sync.Cond) is not. A put tells the worker only when the
// worker has said it waits (idle), so a busy worker costs a put no
// channel operation.
type queue[M any] struct {
	mu     sync.Mutex
	ring   []M  // len(ring) is 0 or a power of two
	head   int  // the oldest message's index in ring
	n      int  // messages queued
	idle   bool // the worker found the queue empty, and waits on wake
	closed bool // the worker has exited: what is put is dropped

	// wake gets a token when a message is put while the worker is idle.
	// A token is sent only after take set idle, and at most one per time
	// idle is set, so the buffer of one always has room.
	wake chan struct{}
}

func newQueue[M any]() *queue[M] {
	return &queue[M]{wake: make(chan struct{}, 1)}
}

// put queues m behind every message put before it, and wakes the worker
// if it waits. After close it drops m.
func (q *queue[M]) put(m M) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if q.n == len(q.ring) {
		q.resize(max(minRing, 2*len(q.ring)))
	}
	q.ring[(q.head+q.n)&(len(q.ring)-1)] = m
	q.n++
	wake := q.idle
	q.idle = false
	q.mu.Unlock()
	if wake {
		select {
		case q.wake <- struct{}{}:
		default: // a token is there already (see wake)
		}
	}
}

// take returns the oldest message, if there is one. If there is none, it
// marks the worker idle: the worker must then wait for a token on wake
// before it takes again.
func (q *queue[M]) take() (m M, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		q.idle = true
		return m, false
	}
	var zero M
	m, q.ring[q.head] = q.ring[q.head], zero // the ring keeps no reference
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
	if len(q.ring) > minRing && q.n <= len(q.ring)/4 {
		q.resize(len(q.ring) / 2)
	}
	return m, true
}

// resize moves the messages, oldest first, to a new ring of size slots.
// q.mu must be held, and size must be a power of two of at least q.n.
func (q *queue[M]) resize(size int) {
	ring := make([]M, size)
	if q.n > 0 {
		k := copy(ring, q.ring[q.head:min(q.head+q.n, len(q.ring))])
		copy(ring[k:], q.ring[:q.n-k])
	}
	q.ring, q.head = ring, 0
}

// close drops what is queued, and every message put from now on: the
// worker has exited, and nothing will take them. Their callers leave on
// the Buffer's stop.
func (q *queue[M]) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.ring, q.head, q.n = nil, 0, 0
}

// capacity returns the ring's size, for tests.
func (q *queue[M]) capacity() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ring)
}
