package waitq

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/metrics"
)

// Waiters are served in the order they joined; one whose ctx ends leaves
// the line, and the next unit goes to the one behind it.
func TestLineServesInOrderAndWithdraws(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Line
		type result struct {
			v   uint64
			err error
		}
		start := func(ctx context.Context) <-chan result {
			l.Lock()
			w := l.Join()
			l.Unlock()
			c := make(chan result, 1)
			go func() {
				v, err := l.Wait(ctx, w, nil, nil)
				c <- result{v, err}
			}()
			return c
		}
		gone, cancel := context.WithCancel(t.Context())
		first, second, third := start(t.Context()), start(gone), start(t.Context())
		if l.Len() != 3 {
			t.Fatalf("got %d waiting, want 3", l.Len())
		}
		cancel()
		if r := <-second; r.err != context.Canceled {
			t.Errorf("withdrawn waiter: got %v, want %v", r.err, context.Canceled)
		}
		l.Lock()
		if n := l.Len(); n != 2 {
			t.Errorf("got %d waiting after one withdrew, want 2", n)
		}
		l.Serve(10)
		l.Serve(20)
		if l.Serve(30) {
			t.Error("Serve of an empty line served someone")
		}
		l.Unlock()
		if got := []result{<-first, <-third}; !slices.Equal(got, []result{{10, nil}, {20, nil}}) {
			t.Errorf("got %v, want units 10 and 20, in order", got)
		}
		if l.Len() != 0 {
			t.Errorf("got %d waiting once everyone left, want 0", l.Len())
		}
	})
}

// panicSink panics on the delta it is given.
type panicSink int64

func (s panicSink) Add(_ metrics.Kind, delta int64) {
	if delta == int64(s) {
		panic("sink")
	}
}

func (panicSink) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as the wait begins takes the waiter out of the line;
// one that panics as it ends gives the unit served back.
func TestLineSinkPanicLeavesNothing(t *testing.T) {
	for _, tt := range []struct {
		name     string
		delta    int64
		gaveBack []uint64
	}{
		{"Begin", 1, nil},
		{"End", -1, []uint64{7}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var l Line
				var gaveBack []uint64
				l.Lock()
				w := l.Join()
				l.Unlock()
				panicked := make(chan any)
				go func() {
					defer func() { panicked <- recover() }()
					l.Wait(t.Context(), w, panicSink(tt.delta), func(v uint64) { gaveBack = append(gaveBack, v) })
				}()
				synctest.Wait()
				l.Lock()
				l.Serve(7)
				l.Unlock()
				if <-panicked == nil {
					t.Fatal("the sink's panic did not reach the caller")
				}
				if l.Len() != 0 {
					t.Error("the waiter is still in the line")
				}
				if !slices.Equal(gaveBack, tt.gaveBack) {
					t.Errorf("gave back %v, want %v", gaveBack, tt.gaveBack)
				}
			})
		})
	}
}
