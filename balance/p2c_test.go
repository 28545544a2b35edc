package balance_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/load"
)

// tower: empty. A balancer with no endpoints is not ready, and waits until
// its caller gives up.
func TestP2CEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bal := balance.NewP2C(list())
		defer bal.Close()
		if readyNowSettled(t, bal) {
			t.Fatal("ReadyNow on an empty balancer: got ready, want not ready")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := bal.Ready(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Ready: got %v, want %v", err, context.DeadlineExceeded)
		}
		if got := time.Since(start); got != 50*time.Millisecond {
			t.Errorf("Ready gave up at %v, want 50ms", got)
		}
	})
}

// tower: single_endpoint. One endpoint: not ready, then ready, called, ready
// again; then it breaks, and the balancer drops it without surfacing the
// error. tower re-checks a ready endpoint before use; here a ready endpoint
// holds a permit granted before it broke, so the failure is seen at its
// next Ready, when that permit is taken, and the permit still works.
func TestP2CSingleEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &errs{}
		ep, h := constMock(0, 0)
		bal := balance.NewP2C(list(ep), balance.WithErrorHandler(e.add))
		defer bal.Close()
		if readyNowSettled(t, bal) {
			t.Fatal("ReadyNow with Allow(0): got ready, want not ready")
		}
		if n := bal.Len(); n != 1 {
			t.Fatalf("got Len() %d, want 1: the balancer must have discovered the endpoint", n)
		}

		h.Allow(1)
		p := readySettled(t, bal)
		if got := callWhich(t, p, "x", map[string]*handle{"1": h}); got != "1" {
			t.Fatalf("got %q, want 1", got)
		}

		h.Allow(1)
		synctest.Wait()
		if n := bal.ReadyLen(); n != 1 {
			t.Fatalf("got ReadyLen() %d after Allow(1), want 1", n)
		}
		lost := errors.New("endpoint lost")
		h.FailReady(lost)
		p = readySettled(t, bal) // granted before the failure
		p.Release()
		if readyNowSettled(t, bal) {
			t.Error("ReadyNow after the endpoint broke: got ready, want not ready")
		}
		if n := bal.Len(); n != 0 {
			t.Errorf("got Len() %d, want 0: the balancer must drop failed endpoints", n)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("mock has %d reservations outstanding, want 0", n)
		}
		e.check(t, "*readycache.Failed[int]: endpoint lost")
	})
}

// tower: two_endpoints_with_equal_load. Requests go to whichever endpoint is
// ready; a failed endpoint is dropped.
func TestP2CTwoEndpointsWithEqualLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := constMock(0, 1)
		b, hb := constMock(0, 1)
		handles := map[string]*handle{"a": ha, "b": hb}
		bal := balance.NewP2C(list(a, b))
		defer bal.Close()
		if readyNowSettled(t, bal) {
			t.Fatal("ReadyNow with both at Allow(0): got ready, want not ready")
		}
		if n := bal.Len(); n != 2 {
			t.Fatalf("got Len() %d, want 2: the balancer must have discovered both endpoints", n)
		}

		ha.Allow(1)
		if got := callWhich(t, readySettled(t, bal), "x", handles); got != "a" {
			t.Errorf("with only a ready: request went to %s, want a", got)
		}
		hb.Allow(1)
		if got := callWhich(t, readySettled(t, bal), "x", handles); got != "b" {
			t.Errorf("with only b ready: request went to %s, want b", got)
		}

		ha.Allow(1)
		hb.Allow(1)
		seen := map[string]bool{}
		for range 2 {
			seen[callWhich(t, readySettled(t, bal), "x", handles)] = true
		}
		if !seen["a"] || !seen["b"] {
			t.Errorf("two requests with both ready once each: got %v, want both used", seen)
		}

		ha.FailReady(errors.New("endpoint lost"))
		if readyNowSettled(t, bal) {
			t.Error("ReadyNow after a broke with b pending: got ready, want not ready")
		}
		if n := bal.Len(); n != 1 {
			t.Errorf("got Len() %d, want 1: the balancer must drop failed endpoints", n)
		}
	})
}

// Of the two endpoints drawn, the one with the lower load wins, whichever
// was drawn first.
func TestP2CLowerLoadWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := constMock(-1, 3)
		b, hb := constMock(-1, 1)
		c, hc := constMock(-1, 2)
		handles := map[string]*handle{"a": ha, "b": hb, "c": hc}
		// Each pick draws a in [0, 2) then b in [0, 3); a == b becomes 2.
		rnd := &script{t: t, nums: []int{
			0, 1, // a vs b: b
			1, 0, // b vs a: b
			0, 2, // a vs c: c
			1, 2, // b vs c: b
			0, 0, // 0 == 0: c vs a: c
			1, 1, // 1 == 1: c vs b: b
		}}
		bal := balance.NewP2C(list(a, b, c), balance.WithRand(rnd))
		defer bal.Close()
		for i, want := range []string{"b", "b", "c", "b", "c", "b"} {
			if got := callWhich(t, readySettled(t, bal), "x", handles); got != want {
				t.Errorf("pick %d: got %s, want %s", i, got, want)
			}
		}
	})
}

// On a tie the first endpoint drawn wins (tower's aload <= bload).
func TestP2CTieGoesToFirstDrawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := constMock(-1, 1)
		b, hb := constMock(-1, 1)
		handles := map[string]*handle{"a": ha, "b": hb}
		// With two endpoints the first draw is IntN(1), always 0; a second
		// draw of 0 equals it, so the first becomes index 1.
		rnd := &script{t: t, nums: []int{0, 1, 0, 0}}
		bal := balance.NewP2C(list(a, b), balance.WithRand(rnd))
		defer bal.Close()
		for i, want := range []string{"a", "b"} {
			if got := callWhich(t, readySettled(t, bal), "x", handles); got != want {
				t.Errorf("pick %d: got %s, want %s", i, got, want)
			}
		}
	})
}

// One ready endpoint is taken without drawing, whatever the others' loads.
func TestP2COneReadyNoDraw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := constMock(0, 0)
		b, hb := constMock(-1, 100)
		rnd := &script{t: t} // any draw fails the test
		bal := balance.NewP2C(list(a, b), balance.WithRand(rnd))
		defer bal.Close()
		if got := callWhich(t, readySettled(t, bal), "x", map[string]*handle{"a": ha, "b": hb}); got != "b" {
			t.Errorf("got %s, want b, the only ready endpoint", got)
		}
	})
}

// With a seeded source, the picks repeat from one balancer to the next.
func TestP2CSeededRandRepeats(t *testing.T) {
	picks := func() []string {
		var out []string
		synctest.Test(t, func(t *testing.T) {
			handles := map[string]*handle{}
			var eps []endpoint
			for i, name := range []string{"a", "b", "c", "d"} {
				ep, h := constMock(-1, float64(i%2))
				eps = append(eps, ep)
				handles[name] = h
			}
			bal := balance.NewP2C(list(eps...), balance.WithRand(newRand(7)))
			defer bal.Close()
			for range 12 {
				out = append(out, callWhich(t, readySettled(t, bal), "x", handles))
			}
		})
		return out
	}
	first, second := picks(), picks()
	if len(first) != 12 || !equal(first, second) {
		t.Errorf("got picks %v then %v, want the same 12 twice", first, second)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newRand returns a seeded source.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// P2C over PeakEwma: once the slow endpoint has answered once, its cost is
// its 200ms RTT, above the fast ones' and above the 30ms default RTT, and
// every pair drawn from three endpoints holds a fast one: it gets nothing
// more.
func TestP2CPeakEwmaAvoidsSlowEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		backend := func(name string, d time.Duration) endpoint {
			svc := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
				time.Sleep(d)
				return name, nil
			})
			return load.NewPeakEwma[string, string](svc, 30*time.Millisecond, 10*time.Second)
		}
		bal := balance.NewP2C(list(backend("fast1", 2*time.Millisecond), backend("slow", 200*time.Millisecond), backend("fast2", 2*time.Millisecond)),
			balance.WithRand(newRand(1)))
		defer bal.Close()
		calls := 0
		for {
			calls++
			res, err := tower.Call(t.Context(), bal, "x")
			if err != nil {
				t.Fatal(err)
			}
			if res == "slow" {
				break
			}
			if calls == 1000 {
				t.Fatal("the slow endpoint got no request in 1000")
			}
		}
		for i := range 100 {
			if res, _ := tower.Call(t.Context(), bal, "x"); res == "slow" {
				t.Fatalf("request %d after the slow answer went to the slow endpoint", i)
			}
		}
	})
}
