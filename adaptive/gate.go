package adaptive

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/waitq"
	"github.com/towergo/tower/metrics"
)

// The gate's state is one word, so that a permit is taken and given back
// with one atomic step against the limit in force: bits 0..24 count the
// requests in flight, bits 25..49 hold the limit, bit 50 is set while
// anybody waits, and bits 51..63 count the grants, wrapping, to pick the
// calls to time. While the wait bit is clear, a caller takes a permit with
// a CAS, without the lock; while it is set, every grant is made under the
// lock. A waiter sets the bit under the lock before it looks for room one
// last time, and a release returns its permit before it reads the bit, so
// either the waiter finds the permit or the release sees the waiter. Every
// grant is a CAS that checks the limit, so in flight never exceeds it.
const (
	inflightMask = 1<<25 - 1
	limitShift   = 25
	limitMask    = 1<<25 - 1
	waitBit      = 1 << 50
	seqShift     = 51
	grant        = 1 + 1<<seqShift // one more in flight, one more grant
)

// overtakes is how many permits may go to higher priorities while a lower
// one waits: the next goes to the lower one, even above its reserve.
const overtakes = 8

const numClasses = tower.NumPriorities

// The wait bound, in typical latencies: see WithWaitToDeadline.
const (
	waitBound     = 2
	standingBound = 1
)

// class returns the index of p's queue: 0 for the lowest priority, and
// the nearest for one out of range.
func class(p tower.Priority) int {
	return int(min(max(p, tower.PriorityLow), tower.PriorityCritical) - tower.PriorityLow)
}

// gate is the admission half of a Limiter: the permits, the queues and the
// window.
type gate struct {
	state   atomic.Uint64
	_       [56]byte
	stride  atomic.Uint32 // a power of two: one call in stride is timed
	reserve int64         // per mille of the limit, for each step down in priority
	sink    metrics.Sink
	dropped func(error) bool
	typical atomic.Int64 // ns, the dependency's latency in the last window that timed a call

	mu         sync.Mutex                    // guards what follows
	q          [numClasses]waitq.Queue       // each class's waiters
	bounded    [numClasses]waitq.SecondQueue // those of them with a deadline, whom the wait bound applies to
	skips      [numClasses]int               // permits handed to higher classes while this one waited; 0 while it has none waiting
	waiting    int
	maxWaiting int
	toDeadline bool          // WithWaitToDeadline: no wait bound, oldest first
	busySince  time.Duration // mono reading when the queue last became non-empty
	expiry     *time.Timer   // refuses the waiters that reach the wait bound; made on first use
	armed      bool          // expiry is set to fire
	w          window
}

// room returns how many may be in flight for a caller of class c to be
// admitted under lim: lim less c's reserve, and at least 1.
func (g *gate) room(c int, lim uint64) uint64 {
	r := (int64(lim)*g.reserve + 999) / 1000 * int64(numClasses-1-c)
	return uint64(max(int64(lim)-r, 1))
}

// take takes a permit if c's share of the limit has room and, for the
// fast path (alone), nobody waits. It returns the grant's number.
func (g *gate) take(c int, alone bool) (seq uint64, ok bool) {
	for {
		v := g.state.Load()
		if alone && v&waitBit != 0 || v&inflightMask >= g.room(c, v>>limitShift&limitMask) {
			return 0, false
		}
		if g.state.CompareAndSwap(v, v+grant) { // the grant count wraps off the top
			return v >> seqShift, true
		}
	}
}

// acquire is Ready's slow path. It returns whether the caller was granted
// the permit numbered seq, and if not, err if ctx ended; else it is shed.
func (g *gate) acquire(ctx context.Context, c int) (granted bool, seq uint64, err error) {
	g.mu.Lock()
	if seq, ok := g.admitLocked(c); ok {
		g.mu.Unlock()
		return true, seq, nil
	}
	g.w.blocked++
	if err := ctx.Err(); err != nil {
		g.mu.Unlock()
		return false, 0, err
	}
	if g.maxWaiting >= 0 && g.waiting >= g.maxWaiting {
		g.mu.Unlock()
		return false, 0, nil
	}
	t := now()
	if g.waiting == 0 {
		g.busySince = t
	}
	w := waitq.New()
	w.Since = t
	g.q[c].Push(w)
	if _, ok := ctx.Deadline(); ok && !g.toDeadline {
		g.bounded[c].Push(w)
	}
	g.waiting++
	g.state.Or(waitBit)
	g.dispatchLocked() // a release may have come before the bit
	g.mu.Unlock()
	return g.wait(ctx, c, w)
}

// wait waits for w's grant or refusal, or withdraws w when ctx ends, as
// waitq.Wait does.
func (g *gate) wait(ctx context.Context, c int, w *waitq.Waiter) (granted bool, seq uint64, err error) {
	seq, err = waitq.Wait(ctx, w, g.sink, func(w *waitq.Waiter) bool { return g.leave(c, w) }, g.giveBack)
	switch {
	case err == errRefused:
		return false, 0, nil
	case err != nil:
		return false, 0, err
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < time.Duration(g.typical.Load()) {
		// It would likely miss its deadline, holding a permit that a
		// waiter behind could use.
		g.release()
		return false, 0, nil
	}
	return true, seq, nil
}

func (g *gate) giveBack(uint64) { g.release() }

// leave takes w out of class c's queues, and reports whether it was still
// in them.
func (g *gate) leave(c int, w *waitq.Waiter) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.dequeueLocked(c, w) {
		return false
	}
	g.dispatchLocked() // the waiter gone may have held back the others
	return true
}

// dequeueLocked takes w out of class c's queues, and reports whether it
// was in them.
func (g *gate) dequeueLocked(c int, w *waitq.Waiter) bool {
	if !g.q[c].Remove(w) {
		return false
	}
	g.bounded[c].Remove(w)
	g.waiting--
	if g.q[c].Len() == 0 {
		g.skips[c] = 0 // a turn earned by waiters now gone is not the next one's
	}
	return true
}

// errRefused is a refused waiter's Err: it is shed.
var errRefused = errors.New("adaptive: refused a permit")

// wakeLocked takes w out of class c's queues and wakes it with the permit
// numbered seq, or refused.
func (g *gate) wakeLocked(c int, w *waitq.Waiter, seq uint64, refused bool) {
	g.dequeueLocked(c, w)
	var err error
	if refused {
		err = errRefused
	}
	w.Wake(seq, err)
}

// expireLocked refuses the waiters past the wait bound, and reports
// whether the queue is standing and how long until the next waiter passes
// the bound (0 if none). There is no bound with toDeadline or before the
// first timed window.
func (g *gate) expireLocked() (standing bool, next time.Duration) {
	typical := time.Duration(g.typical.Load())
	if typical <= 0 || g.waiting == 0 || g.toDeadline {
		return false, 0
	}
	t := now()
	bound := waitBound * typical
	if standing = t-g.busySince > bound; standing {
		bound = standingBound * typical
	}
	for c := range g.bounded {
		w := g.bounded[c].Front()
		for ; w != nil && t-w.Since > bound; w = g.bounded[c].Front() {
			g.wakeLocked(c, w, 0, true)
		}
		if w != nil {
			if d := w.Since + bound - t + 1; next == 0 || d < next {
				next = d
			}
		}
	}
	return standing, next
}

// admitLocked grants a newcomer of class c a permit unless a waiter goes
// first: one of its class or above, or of a lower class whose turn came.
func (g *gate) admitLocked(c int) (seq uint64, ok bool) {
	for d := range numClasses {
		if g.q[d].Len() > 0 && (d >= c || g.skips[d] >= overtakes) {
			return 0, false
		}
	}
	if seq, ok = g.take(c, false); ok && g.overtook(c) {
		g.dispatchLocked()
	}
	return seq, ok
}

// overtook counts a permit handed to class c against each lower class that
// waits, and reports whether one's turn has come.
func (g *gate) overtook(c int) bool {
	due := false
	for d := range c {
		if g.q[d].Len() > 0 {
			g.skips[d]++
			due = due || g.skips[d] >= overtakes
		}
	}
	return due
}

// dispatchLocked refuses the waiters past the wait bound, then hands
// permits to waiters while the limit has room: first to a class whose turn
// has come, then to the highest class waiting if its share has room;
// within a class, the oldest, or under a standing queue the newest with a
// deadline unless the oldest has none. Then it clears the wait bit, or
// sets the expiry timer so that refusals come on time.
func (g *gate) dispatchLocked() {
	standing, next := g.expireLocked()
	for {
		c, seq := g.pickLocked()
		if c < 0 {
			break
		}
		w := g.q[c].Front()
		if standing && g.bounded[c].Has(w) {
			w = g.bounded[c].Back()
		}
		g.wakeLocked(c, w, seq, false)
		g.skips[c] = 0
		g.overtook(c)
	}
	switch {
	case g.waiting == 0:
		g.state.And(^uint64(waitBit))
	case next > 0 && !g.armed:
		g.armed = true
		if g.expiry == nil {
			g.expiry = time.AfterFunc(next, g.expired)
		} else {
			g.expiry.Reset(next)
		}
	}
}

func (g *gate) expired() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = false
	g.dispatchLocked()
}

// pickLocked takes a permit for the class to serve next and returns the
// class and the grant's number, or returns -1.
func (g *gate) pickLocked() (int, uint64) {
	for c := numClasses - 1; c >= 0; c-- {
		if g.skips[c] >= overtakes { // so c has waiters
			if seq, ok := g.take(numClasses-1, false); ok { // the whole limit
				return c, seq
			}
		}
	}
	for c := numClasses - 1; c >= 0; c-- {
		if g.q[c].Len() > 0 {
			if seq, ok := g.take(c, false); ok {
				return c, seq
			}
			return -1, 0
		}
	}
	return -1, 0
}

// release gives a permit back, to a waiter if one may have it.
func (g *gate) release() {
	if g.state.Add(^uint64(0))&waitBit != 0 {
		g.mu.Lock()
		g.dispatchLocked()
		g.mu.Unlock()
	}
}

// setLimitLocked puts n in force, hands permits to waiters if it rose, and
// returns how far it moved. Only the lock's holder changes the limit bits.
func (g *gate) setLimitLocked(n int) (delta int) {
	delta = n - g.limit()
	g.state.Add(uint64(delta) << limitShift)
	g.dispatchLocked()
	return delta
}

func (g *gate) inFlight() int { return int(g.state.Load() & inflightMask) }
func (g *gate) limit() int    { return int(g.state.Load() >> limitShift & limitMask) }
