package balance_test

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/towertest"
)

// Under a context with a Tried, Ready picks among the endpoints not tried
// yet while one is ready, and records each pick; with all tried, it picks
// as it would without. P2C over two endpoints takes the less loaded, a,
// every time, but for a retry.
func TestTriedSendsRetriesElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := constMock(-1, 1)
		b, hb := constMock(-1, 2)
		bal := balance.NewP2C(list(a, b))
		defer bal.Close()
		handles := map[string]*handle{"a": ha, "b": hb}
		synctest.Wait()
		if got := callWhich(t, towertest.MustReady(t, bal), "x", handles); got != "a" {
			t.Fatalf("without a Tried: sent to %s, want a", got)
		}
		tried := &balance.Tried[int]{}
		ctx := balance.WithTried(t.Context(), tried)
		var got []string
		for range 3 {
			p, err := bal.Ready(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, callWhich(t, p, "x", handles))
			synctest.Wait()
		}
		if want := []string{"a", "b", "a"}; !slices.Equal(got, want) {
			t.Errorf("with a Tried: sent to %v, want %v (a, then the other, then both tried)", got, want)
		}
		if keys := tried.Keys(); !slices.Equal(keys, []int{0, 1, 0}) {
			t.Errorf("Tried's keys %v, want [0 1 0]", keys)
		}
		other := &balance.Tried[string]{} // not the balancer's key type: ignored
		p, err := bal.Ready(balance.WithTried(t.Context(), other))
		if err != nil {
			t.Fatal(err)
		}
		if got := callWhich(t, p, "x", handles); got != "a" || len(other.Keys()) != 0 {
			t.Errorf("a Tried of strings: sent to %s, keys %v; want a, none", got, other.Keys())
		}
	})
}
