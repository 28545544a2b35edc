package adaptive

import (
	"context"
	"fmt"
	"math/bits"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
)

// The gate's state word is laid out as its doc says: 25 bits of requests
// in flight, then 25 of limit, the wait bit at 50 and the grant count from
// bit 51; the fields do not overlap, the largest limit fits, and a grant
// adds one in flight and one to the count.
func TestGateStateLayout(t *testing.T) {
	if bits.OnesCount64(inflightMask) != 25 || inflightMask != 1<<limitShift-1 {
		t.Errorf("inflightMask %#x, want bits 0..24", uint64(inflightMask))
	}
	if bits.OnesCount64(limitMask) != 25 || limitMask != 1<<25-1 {
		t.Errorf("limitMask %#x, want 25 bits", uint64(limitMask))
	}
	if uint64(inflightMask|limitMask<<limitShift|waitBit) != 1<<seqShift-1 ||
		inflightMask&(limitMask<<limitShift) != 0 || (limitMask<<limitShift)&waitBit != 0 {
		t.Errorf("fields %#x, %#x, %#x: want them to tile bits 0..50", uint64(inflightMask), uint64(limitMask<<limitShift), uint64(waitBit))
	}
	if MaxLimit > limitMask || MaxLimit > inflightMask {
		t.Errorf("MaxLimit %d does not fit", MaxLimit)
	}
	if grant&inflightMask != 1 || grant>>seqShift != 1 || grant&^(inflightMask|1<<seqShift) != 0 {
		t.Errorf("grant %#x, want one in flight and one grant", uint64(grant))
	}
}

// Between a release's step on the state word and its hand-off under the
// lock, the permit is free in the word while somebody still waits for it.
// A newcomer that takes the lock in that gap must not take the permit
// from a waiter that goes first: one of its class or above, or a lower
// one whose turn has come (overtakes permits went past it). A lower
// waiter one permit short of its turn is overtaken.
func TestNewcomerInReleaseGap(t *testing.T) {
	low, normal, critical := class(tower.PriorityLow), class(tower.PriorityNormal), class(tower.PriorityCritical)
	cases := []struct {
		name          string
		waiter, comer int
		skips         int // the waiter's class's, when the newcomer comes
		waiterFirst   bool
	}{
		{"same class", normal, normal, 0, true},
		{"critical behind critical", critical, critical, 0, true},
		{"higher waiter", critical, normal, 0, true},
		{"lower waiter, its turn", low, normal, overtakes, true},
		{"lower waiter, one short", low, normal, overtakes - 1, false},
		{"lower waiter, no turn", low, critical, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &gate{maxWaiting: -1, reserve: 100}
				g.state.Store(1 << limitShift) // limit 1
				if _, ok := g.take(numClasses-1, false); !ok {
					t.Fatal("the first permit was not free")
				}
				type result struct {
					v   bool
					err error
				}
				enter := func(c int) chan result {
					ch := make(chan result, 1)
					go func() {
						v, _, err := g.acquire(t.Context(), c)
						ch <- result{v, err}
					}()
					synctest.Wait()
					return ch
				}
				waiter := enter(tc.waiter)
				g.mu.Lock()
				g.skips[tc.waiter] = tc.skips
				g.mu.Unlock()
				g.state.Add(^uint64(0)) // the release's first step; its lock not yet taken
				comer := enter(tc.comer)
				first, second := waiter, comer
				if !tc.waiterFirst {
					first, second = comer, waiter
				}
				select {
				case r := <-first:
					if !r.v || r.err != nil {
						t.Fatalf("first: %v, %v, want granted", r.v, r.err)
					}
				default:
					t.Fatal("the one to go first waits")
				}
				select {
				case <-second:
					t.Fatal("the one to go second was granted too, above the limit")
				default:
				}
				g.release() // the first's permit
				synctest.Wait()
				if r := <-second; !r.v || r.err != nil {
					t.Fatalf("second: %v, %v, want granted", r.v, r.err)
				}
				if got := g.inFlight(); got != 1 {
					t.Errorf("in flight %d, want 1", got)
				}
			})
		})
	}
}

// addLog is a metrics.Sink that records every Add.
type addLog struct{ adds []string }

func (a *addLog) Add(k metrics.Kind, delta int64)        { a.adds = append(a.adds, fmt.Sprint(k, delta)) }
func (a *addLog) Observe(time.Duration, metrics.Outcome) {}

// A caller that finds a permit free on the slow path, nobody waiting (a
// release came between its fast path and the lock), takes it there: it
// is never queued, and never counted as Waiting.
func TestSlowPathFreePermitDoesNotWait(t *testing.T) {
	for c := range numClasses {
		sink := &addLog{}
		g := &gate{maxWaiting: -1, reserve: 100, sink: sink}
		g.state.Store(10 << limitShift)
		v, _, err := g.acquire(context.Background(), c)
		if !v || err != nil {
			t.Fatalf("class %d: %v, %v, want granted", c, v, err)
		}
		if len(sink.adds) != 0 || g.waiting != 0 {
			t.Errorf("class %d: reported %v, %d waiting; want nothing, nobody", c, sink.adds, g.waiting)
		}
	}
}
