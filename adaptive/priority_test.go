package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towertest"
)

// A waiting low-priority caller is overtaken by at most 8 critical ones:
// the ninth permit is its own (concurrency-limits issue 120: a partition
// starved).
func TestLowPriorityIsNotStarved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := mock(t, hold(), adaptive.WithBounds(1, 1))
		h.AllowAll()
		first := towertest.MustReady(t, l)
		var (
			mu    sync.Mutex
			order []string
			wg    sync.WaitGroup
		)
		wait := func(p tower.Priority, name string) {
			wg.Go(func() {
				perm, err := l.Ready(withPriority(p))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				perm.Release()
			})
			synctest.Wait()
		}
		wait(tower.PriorityLow, "L")
		wait(tower.PriorityNormal, "N")
		for range 20 {
			wait(tower.PriorityCritical, "C")
		}
		first.Release()
		wg.Wait()
		// Normal goes after 8 critical; low, overtaken by those 8 and by
		// normal, goes next; then the rest of the critical ones.
		if got, want := strings.Join(order, ""), "CCCCCCCCNL"+strings.Repeat("C", 12); got != want {
			t.Errorf("served in order %s, want %s", got, want)
		}
	})
}

// Newcomers that find room count as overtaking a waiter too: under a
// stream of normal requests that keep the limit above low's reserve, a
// waiting low request still gets in after 8.
func TestLowPriorityUnderStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := mock(t, hold(), adaptive.WithBounds(10, 10)) // low's room 8, normal's 9
		h.AllowAll()
		var held []tower.Permit[string, string]
		for range 8 {
			held = append(held, towertest.MustReady(t, l))
		}
		low := towertest.GoReady(withPriority(tower.PriorityLow), tower.Service[string, string](l))
		synctest.Wait()
		// The 8th normal request admitted hands low the 10th place at once,
		// before that request gives its own back.
		for i := 1; i <= 8; i++ {
			p, err := l.Ready(t.Context()) // normal: takes the 9th place, then gives it back
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if got, want := low.Done(), i == 8; got != want {
				t.Fatalf("after %d normal requests admitted, low admitted %v, want %v", i, got, want)
			}
			p.Release()
			synctest.Wait()
		}
		p := low.Value(t)
		p.Release()
		for i := range held {
			held[i].Release()
		}
	})
}

// A turn is the waiter's who earned it: when low's waiter, overtaken 8
// times, gives up before a permit is free, the next low caller starts
// its count afresh, and is not let in above low's share.
func TestTurnLeavesWithItsWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := mock(t, hold(), adaptive.WithBounds(10, 10)) // low's room 8, normal's 9
		h.AllowAll()
		var held []tower.Permit[string, string]
		for range 8 {
			held = append(held, towertest.MustReady(t, l))
		}
		ctx, giveUp := context.WithCancel(withPriority(tower.PriorityLow))
		first := towertest.GoReady(ctx, tower.Service[string, string](l))
		synctest.Wait()
		held = append(held, towertest.MustReady(t, l)) // normal: the 9th place, the 1st overtaking
		crit := withPriority(tower.PriorityCritical)
		for range 6 { // critical: the 10th place, given back: the 2nd to 7th overtakings
			p, err := l.Ready(crit)
			if err != nil {
				t.Fatal(err)
			}
			p.Release()
		}
		p, err := l.Ready(crit) // the 8th: low's turn, but the limit is full
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, p)
		synctest.Wait()
		first.ExpectPending(t)
		giveUp()
		first.ExpectError(t, context.Canceled)
		held[len(held)-1].Release() // 9 in flight: room for normal, not for low
		synctest.Wait()
		next := towertest.GoReady(withPriority(tower.PriorityLow), tower.Service[string, string](l))
		synctest.Wait()
		if next.Done() {
			t.Fatalf("a new low caller was admitted with %d in flight, above low's room of 8", l.InFlight()-1)
		}
		for _, p := range held[:len(held)-1] {
			p.Release()
		}
		last := next.Value(t)
		last.Release()
	})
}

// Many goroutines of every priority: the requests in flight never exceed
// the limit, whatever their priorities, and every priority is served (run
// with -race). The limit moves all the while.
func TestPrioritiesShareTheLimit(t *testing.T) {
	for _, moving := range []bool{false, true} {
		t.Run(fmt.Sprintf("moving=%v", moving), func(t *testing.T) {
			const most = 8
			var inflight, peak atomic.Int64
			inner := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(10 * time.Microsecond)
				inflight.Add(-1)
				return req, nil
			})
			var alg adaptive.Algorithm = hold()
			if moving {
				alg = &flip{}
			}
			l := adaptive.New[int, int](inner, just(alg), adaptive.WithBounds(2, most), adaptive.WithInitial(most),
				adaptive.WithWindow(time.Nanosecond, 1))
			var served [tower.NumPriorities]atomic.Int64
			var wg sync.WaitGroup
			for g := range 48 {
				p := tower.Priority(g%3) + tower.PriorityLow
				wg.Go(func() {
					ctx := tower.WithPriority(context.Background(), p)
					for range 100 {
						if _, err := tower.Call(ctx, tower.Service[int, int](l), 0); err != nil {
							t.Error(err)
							return
						}
						served[p-tower.PriorityLow].Add(1)
					}
				})
			}
			wg.Wait()
			if p := peak.Load(); p > most {
				t.Errorf("%d requests in flight at once, want at most %d", p, most)
			}
			for i := range served {
				if n := served[i].Load(); n != 1600 {
					t.Errorf("priority %v: %d served, want 1600", tower.Priority(i)+tower.PriorityLow, n)
				}
			}
			if n := l.InFlight(); n != 0 {
				t.Errorf("InFlight() = %d at the end, want 0", n)
			}
		})
	}
}

// flip moves the limit between its bounds every window.
type flip struct{ n int }

func (f *flip) Update(limit float64, _ adaptive.Sample) float64 {
	f.n++
	if f.n%2 == 0 {
		return 1000
	}
	return 0
}

// Under a LoadShed, whose probe carries the request's priority
// (tower.ReadyNowFor), low priority is shed first near the limit, then
// normal, and critical still gets in.
func TestLoadShedShedsLowFirst(t *testing.T) {
	l, h := mock(t, hold(), adaptive.WithBounds(10, 10)) // r = 1: low 8, normal 9, critical 10
	h.AllowAll()
	svc := loadshed.New[string, string](l)
	var held []tower.Permit[string, string]
	call := func(p tower.Priority) error {
		ctx := withPriority(p)
		perm, err := svc.Ready(ctx)
		if err != nil {
			t.Fatalf("Ready: %v", err)
		}
		if l.InFlight() > len(held) { // admitted: keep it in flight
			held = append(held, perm)
			return nil
		}
		_, err = perm.Call(ctx, "x")
		return err
	}
	for i := range 8 {
		if err := call(tower.PriorityLow); err != nil {
			t.Fatalf("low request %d: %v, want admitted", i, err)
		}
	}
	steps := []struct {
		p    tower.Priority
		shed bool
	}{
		{tower.PriorityLow, true}, {tower.PriorityNormal, false}, {tower.PriorityLow, true},
		{tower.PriorityNormal, true}, {tower.PriorityCritical, false}, {tower.PriorityCritical, true},
	}
	for i, s := range steps {
		err := call(s.p)
		if got := errors.Is(err, loadshed.ErrOverloaded); got != s.shed {
			t.Errorf("step %d, %v with %d in flight: shed %v (err %v), want shed %v", i, s.p, l.InFlight(), got, err, s.shed)
		}
	}
	for _, p := range held {
		p.Release()
	}
	if got := l.InFlight(); got != 0 {
		t.Errorf("InFlight() = %d after release, want 0", got)
	}
}
