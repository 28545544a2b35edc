package buffer

import (
	"math/rand/v2"
	"testing"
)

// The queue is FIFO through every growth, wrap-around and shrink, against
// a slice as the model; its ring never holds more than twice what is
// queued, or minRing, and is back to minRing once drained.
func TestQueueOrderAndSize(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, seed))
		q := newQueue[int]()
		var model []int
		next := 0
		for range 20000 {
			// Phases of mostly puts, then mostly takes, so that the ring
			// grows and shrinks many times.
			putBias := 3
			if (next/500)%2 == 1 {
				putBias = 1
			}
			if rng.IntN(4) < putBias {
				q.put(next)
				model = append(model, next)
				next++
			} else {
				got, ok := q.take()
				if ok != (len(model) > 0) {
					t.Fatalf("seed %d: take got ok=%v with %d queued", seed, ok, len(model))
				}
				if ok {
					if got != model[0] {
						t.Fatalf("seed %d: took %d, want %d", seed, got, model[0])
					}
					model = model[1:]
				}
			}
			if size := q.capacity(); size > max(minRing, 4*len(model)) && len(model) > 0 {
				t.Fatalf("seed %d: ring of %d for %d queued", seed, size, len(model))
			}
		}
		for len(model) > 0 {
			got, _ := q.take()
			if got != model[0] {
				t.Fatalf("seed %d: took %d, want %d", seed, got, model[0])
			}
			model = model[1:]
		}
		if size := q.capacity(); size > minRing {
			t.Errorf("seed %d: a drained queue holds a ring of %d, want at most %d", seed, size, minRing)
		}
	}
}

// A put tells an idle worker on wake, once; a busy one is not told; after
// close, what is put is dropped.
func TestQueueWake(t *testing.T) {
	q := newQueue[int]()
	if _, ok := q.take(); ok {
		t.Fatal("took a message from an empty queue")
	}
	q.put(1)
	q.put(2)
	if n := len(q.wake); n != 1 {
		t.Fatalf("%d tokens on wake after two puts to an idle worker, want 1", n)
	}
	<-q.wake
	q.take()
	q.put(3) // the worker is busy: not told
	if n := len(q.wake); n != 0 {
		t.Errorf("%d tokens on wake after a put to a busy worker, want 0", n)
	}
	q.close()
	q.put(4)
	if _, ok := q.take(); ok || q.capacity() != 0 {
		t.Errorf("a closed queue holds messages (ring of %d)", q.capacity())
	}
}
