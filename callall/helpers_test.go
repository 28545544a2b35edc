package callall_test

import (
	"iter"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/towertest"
)

type handle = towertest.Handle[string, string]

// item is one element of a call-all sequence, and when it came.
type item struct {
	res string
	err error
	at  time.Duration
}

// collector ranges over a sequence on its own goroutine, as a consumer
// that takes every item as soon as it comes.
type collector struct {
	items chan item
	end   *towertest.Outcome[time.Duration] // when the range loop ended
}

func collect(seq iter.Seq2[string, error], start time.Time) *collector {
	c := &collector{items: make(chan item, 100)}
	c.end = towertest.Go(func() (time.Duration, error) {
		for res, err := range seq {
			c.items <- item{res, err, time.Since(start)}
		}
		return time.Since(start), nil
	})
	synctest.Wait()
	return c
}

// next fails t unless the next item is already there, and returns it.
func (c *collector) next(t *testing.T) item {
	t.Helper()
	synctest.Wait()
	select {
	case it := <-c.items:
		return it
	default:
		t.Fatal("no item, want one")
		return item{}
	}
}

// expect fails t unless the next item is the response want, at at.
func (c *collector) expect(t *testing.T, want string, at time.Duration) {
	t.Helper()
	it := c.next(t)
	if it.res != want || it.err != nil || it.at != at {
		t.Fatalf("got item %q, %v at %v; want %q, nil at %v", it.res, it.err, it.at, want, at)
	}
}

// expectErr fails t unless the next item is the error want, at at.
func (c *collector) expectErr(t *testing.T, want error, at time.Duration) {
	t.Helper()
	it := c.next(t)
	if it.err != want || it.at != at {
		t.Fatalf("got item %q, %v at %v; want error %v at %v", it.res, it.err, it.at, want, at)
	}
}

// none fails t if an item is there, or the sequence has ended.
func (c *collector) none(t *testing.T) {
	t.Helper()
	synctest.Wait()
	select {
	case it := <-c.items:
		t.Fatalf("got item %q, %v; want none yet", it.res, it.err)
	default:
	}
	if c.end.Done() {
		t.Fatal("the sequence ended, want it to go on")
	}
}

// ended fails t unless the sequence has ended, at at, with no item left.
func (c *collector) ended(t *testing.T, at time.Duration) {
	t.Helper()
	synctest.Wait()
	select {
	case it := <-c.items:
		t.Fatalf("got item %q, %v; want the end", it.res, it.err)
	default:
	}
	if !c.end.Done() {
		t.Fatal("the sequence goes on, want it ended")
	}
	if got, _ := c.end.Wait(); got != at {
		t.Errorf("the sequence ended at %v, want %v", got, at)
	}
}

// received takes the n requests the mock must have received by now, in
// whatever order they arrived, keyed by value.
func received(t *testing.T, h *handle, n int) map[string]*towertest.Request[string, string] {
	t.Helper()
	synctest.Wait()
	got := map[string]*towertest.Request[string, string]{}
	for range n {
		r, ok := h.TryNext()
		if !ok {
			t.Fatalf("the service received %d requests, want %d", len(got), n)
		}
		got[r.Value] = r
	}
	h.ExpectNone(t)
	return got
}
