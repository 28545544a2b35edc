package hedge_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// A budget that cannot pay for a hedge stops it; one that pays for one
// hedge allows exactly one.
func TestHedgeBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Deposits earn nothing; the reserve pays for one hedge per second.
		svc, h, _ := newHedge(hedge.WithBudget(retry.NewTPSBudget(time.Second, 1, 0)))
		for i, wantHedge := range []bool{true, false} {
			c := towertest.GoRequest(t.Context(), svc, "orig")
			orig := h.ExpectSettled(t, "orig")
			time.Sleep(10 * ms)
			if wantHedge {
				h.ExpectSettled(t, "orig")
			} else {
				h.ExpectNoneSettled(t)
			}
			orig.Respond("done")
			res, err := c.Wait()
			if err != nil || res != "done" {
				t.Errorf("call %d: got %q, %v; want %q", i+1, res, err, "done")
			}
		}
		h.ExpectIdle(t, 3)
	})
}

// By default, a Hedge's budget is retry.NewTPSBudget(10s, 10, 1-0.9): a
// reserve of 10 per second over 10s, 100 hedges of 10 tokens each, and one
// token per call. Call i (from 1) deposits, then its hedge withdraws 10 if
// 1000 + i - 10·(hedges so far) >= 10: calls 1 to 111 are all hedged, then
// one call in ten, when the deposits have paid for it (120, 130, ...).
func TestHedgeDefaultBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		var hedged []int
		for i := 1; i <= 200; i++ {
			c := towertest.GoRequest(t.Context(), svc, "orig")
			orig := h.ExpectSettled(t, "orig")
			time.Sleep(10 * ms)
			synctest.Wait()
			if _, ok := h.TryNext(); ok {
				hedged = append(hedged, i)
			}
			orig.Respond("done")
			c.Wait()
		}
		var want []int
		for i := 1; i <= 111; i++ {
			want = append(want, i)
		}
		for i := 120; i <= 200; i += 10 {
			want = append(want, i)
		}
		if fmt.Sprint(hedged) != fmt.Sprint(want) {
			t.Errorf("hedged calls %v, want %v", hedged, want)
		}
	})
}

// WithBudget(nil): hedges are not limited, as in tower.
func TestHedgeNoBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge(hedge.WithBudget(nil))
		for range 200 {
			c := towertest.GoRequest(t.Context(), svc, "orig")
			orig := h.ExpectSettled(t, "orig")
			time.Sleep(10 * ms)
			h.ExpectSettled(t, "orig")
			orig.Respond("done")
			c.Wait()
		}
		h.ExpectIdle(t, 400)
	})
}
