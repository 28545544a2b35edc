package waitq

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

// order returns the waiters of q from front to back, checking the links
// both ways and the count on the way.
func order(t *testing.T, q *Queue) []*Waiter { return orderOf(t, &q.list, 0) }

// orderOf is order for a queue through link k.
func orderOf(t *testing.T, q *list, k int) []*Waiter {
	t.Helper()
	var fwd []*Waiter
	var last *Waiter
	for w := q.head; w != nil; w = w.next[k] {
		if w.prev[k] != last {
			t.Fatalf("waiter %d: prev link broken", len(fwd))
		}
		if !w.queued[k] {
			t.Fatalf("waiter %d is linked but not marked queued", len(fwd))
		}
		fwd = append(fwd, w)
		last = w
	}
	if q.tail != last {
		t.Fatal("tail is not the last waiter")
	}
	if q.Len() != len(fwd) {
		t.Fatalf("got Len %d, want %d (the waiters linked)", q.Len(), len(fwd))
	}
	return fwd
}

func push(q *Queue, n int) []*Waiter {
	ws := make([]*Waiter, n)
	for i := range ws {
		ws[i] = New()
		q.Push(ws[i])
	}
	return ws
}

func TestZeroQueueIsEmpty(t *testing.T) {
	var q Queue
	if q.Len() != 0 || q.Front() != nil {
		t.Fatalf("got Len %d, Front %p; want 0, nil", q.Len(), q.Front())
	}
	if q.Wake(1, nil) {
		t.Fatal("Wake on an empty queue: got true, want false")
	}
}

func TestPushKeepsArrivalOrder(t *testing.T) {
	var q Queue
	ws := push(&q, 4)
	if got := order(t, &q); !slices.Equal(got, ws) {
		t.Fatal("got waiters out of arrival order")
	}
	if q.Front() != ws[0] {
		t.Fatal("Front is not the oldest waiter")
	}
}

func TestRemove(t *testing.T) {
	for _, tt := range []struct {
		name   string
		remove []int // indexes into 4 pushed waiters
		left   []int
	}{
		{"Front", []int{0}, []int{1, 2, 3}},
		{"Back", []int{3}, []int{0, 1, 2}},
		{"Middle", []int{1}, []int{0, 2, 3}},
		{"TwoAdjacent", []int{1, 2}, []int{0, 3}},
		{"All", []int{2, 0, 3, 1}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var q Queue
			ws := push(&q, 4)
			for _, i := range tt.remove {
				if !q.Remove(ws[i]) {
					t.Fatalf("Remove(waiter %d): got false, want true", i)
				}
				if ws[i].queued[0] || ws[i].prev[0] != nil || ws[i].next[0] != nil {
					t.Fatalf("waiter %d still linked after Remove", i)
				}
			}
			var want []*Waiter
			for _, i := range tt.left {
				want = append(want, ws[i])
			}
			if got := order(t, &q); !slices.Equal(got, want) {
				t.Fatalf("got %d waiters left in the wrong order, want %v", len(got), tt.left)
			}
			for _, i := range tt.remove {
				if ws[i].Woken() {
					t.Errorf("waiter %d was woken by Remove", i)
				}
			}
		})
	}
}

func TestRemoveTwiceReportsFalse(t *testing.T) {
	var q Queue
	ws := push(&q, 2)
	q.Remove(ws[0])
	if q.Remove(ws[0]) {
		t.Fatal("second Remove: got true, want false")
	}
	if got := order(t, &q); !slices.Equal(got, ws[1:]) {
		t.Fatal("a second Remove changed the queue")
	}
}

func TestRemoveUnqueuedWaiter(t *testing.T) {
	var q Queue
	push(&q, 1)
	if q.Remove(New()) {
		t.Fatal("Remove of a waiter never pushed: got true, want false")
	}
	if q.Len() != 1 {
		t.Fatalf("got Len %d, want 1", q.Len())
	}
}

func TestWakeServesOldestFirst(t *testing.T) {
	var q Queue
	ws := push(&q, 3)
	errGone := errors.New("gone")
	if !q.Wake(7, nil) || !q.Wake(0, errGone) {
		t.Fatal("Wake on a non-empty queue: got false, want true")
	}
	if !ws[0].Woken() || ws[0].Value != 7 || ws[0].Err != nil {
		t.Errorf("first waiter: got woken %t, Value %d, Err %v; want true, 7, nil", ws[0].Woken(), ws[0].Value, ws[0].Err)
	}
	if !ws[1].Woken() || ws[1].Err != errGone {
		t.Errorf("second waiter: got woken %t, Err %v; want true, %v", ws[1].Woken(), ws[1].Err, errGone)
	}
	if ws[2].Woken() {
		t.Error("third waiter was woken, want still parked")
	}
	if got := order(t, &q); !slices.Equal(got, ws[2:]) {
		t.Fatal("got the wrong waiters left after two Wakes")
	}
	// A woken waiter is out of the queue: removing it reports false, which
	// is how an owner tells a waiter that was granted from one that left.
	if q.Remove(ws[0]) {
		t.Error("Remove of a woken waiter: got true, want false")
	}
}

func TestPushAfterEmptying(t *testing.T) {
	var q Queue
	ws := push(&q, 2)
	q.Remove(ws[1])
	q.Wake(0, nil)
	w := New()
	q.Push(w)
	if got := order(t, &q); !slices.Equal(got, []*Waiter{w}) {
		t.Fatal("queue emptied and refilled: got the wrong waiters")
	}
	if q.Front() != w {
		t.Fatal("Front is not the only waiter")
	}
}

// A waiter in a Queue and a SecondQueue at once leaves each on its own link:
// the gate's queue of all its waiters and that of those with a deadline.
func TestTwoQueues(t *testing.T) {
	var all Queue
	var some SecondQueue
	ws := push(&all, 4)
	some.Push(ws[3])
	some.Push(ws[1])
	if some.Front() != ws[3] || some.Back() != ws[1] || !some.Has(ws[1]) || some.Has(ws[0]) {
		t.Fatal("the second queue does not hold 3 then 1")
	}
	all.Remove(ws[1])
	if got := orderOf(t, &some.list, 1); !slices.Equal(got, []*Waiter{ws[3], ws[1]}) {
		t.Fatal("Remove from the first queue changed the second")
	}
	some.Remove(ws[3])
	if got := order(t, &all); !slices.Equal(got, []*Waiter{ws[0], ws[2], ws[3]}) {
		t.Fatal("Remove from the second queue changed the first")
	}
	if all.Back() != ws[3] || some.Front() != ws[1] || some.Len() != 1 {
		t.Fatal("got the wrong ends after the removals")
	}
}

// A Waiter stays in the 80-byte size class: the memory a parked caller
// holds (limit's TestConcurrencyWaiterMemory).
func TestWaiterSize(t *testing.T) {
	if n := unsafe.Sizeof(Waiter{}); n > 80 {
		t.Errorf("a Waiter is %d bytes, want at most 80", n)
	}
}
