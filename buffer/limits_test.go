package buffer_test

import (
	"fmt"
	"math"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// maxBound is the largest bound New and NewLayer accept.
const maxBound = 1<<32 - 1

// makers make a Buffer of a bound over inner, by New or through a Layer,
// and return it with the function that closes it.
var makers = []struct {
	fn   string
	make func(inner svc, bound int) (svc, func() error)
}{
	{"buffer.New", func(inner svc, bound int) (svc, func() error) {
		b := buffer.New(inner, bound)
		return b, b.Close
	}},
	{"buffer.NewLayer", func(inner svc, bound int) (svc, func() error) {
		l := buffer.NewLayer[string, string](bound)
		return l.Wrap(inner), l.Close
	}},
}

// Every bound New and NewLayer refuse gets a panic that names the function
// and the value; the extreme bounds they accept make a Buffer that serves,
// and grants that many slots without waiting (up to a few, for the
// largest).
func TestBoundLimits(t *testing.T) {
	for _, mk := range makers {
		for _, bound := range []int{math.MinInt64, -1, 0, 1 << 32, math.MaxInt64} {
			t.Run(fmt.Sprintf("%s/%d", mk.fn, bound), func(t *testing.T) {
				want := fmt.Sprintf("%s: bound must be between 1 and %d, got %d", mk.fn, maxBound, bound)
				m, _ := towertest.NewMock[string, string]()
				towertest.Panics(t, want, func() { mk.make(m, bound) })
			})
		}
		for _, bound := range []int{1, maxBound} {
			t.Run(fmt.Sprintf("%s/%d", mk.fn, bound), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					m, h := towertest.NewMock[string, string]()
					s, closeIt := mk.make(m, bound)
					defer closeIt()
					call := towertest.GoCall(t.Context(), towertest.MustReady(t, s), "hello")
					h.ExpectSettled(t, "hello").Respond("world")
					call.ExpectValue(t, "world")
					wantFree(t, s, min(bound, 1000))
				})
			})
		}
	}
}

// wantFree fails t unless s grants n reservations at once, without
// waiting; it gives them back.
func wantFree(t *testing.T, s svc, n int) {
	t.Helper()
	held := make([]permit, 0, n)
	defer func() {
		for i := range held {
			held[i].Release()
		}
	}()
	for range n {
		p, ok, err := tower.ReadyNow(s)
		if !ok {
			t.Fatalf("got %d reservations at once (then %v), want %d", len(held), err, n)
		}
		held = append(held, p)
	}
}
