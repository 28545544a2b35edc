package balance_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/towertest"
)

// The removal handler hears of each endpoint that leaves the balancer's
// set, once its reservation is given back: replaced under its key, removed
// by the Discover, and dropped by Close. Its place for closing endpoints
// that hold connections.
func TestRemovalHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu      sync.Mutex
			removed []string
		)
		a, ha := constMock(-1, 0)
		b, hb := constMock(-1, 0)
		c, hc := constMock(-1, 0)
		names := map[endpoint]string{a: "a", b: "b", c: "c"}
		handles := map[endpoint]*handle{a: ha, b: hb, c: hc}
		d := make(scripted)
		bal := balance.NewP2C(d, balance.WithRemovalHandler(func(key int, svc endpoint) {
			mu.Lock()
			defer mu.Unlock()
			removed = append(removed, fmt.Sprintf("%d=%s (outstanding %d)", key, names[svc], handles[svc].Outstanding()))
		}))
		check := func(want ...string) {
			t.Helper()
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(removed) != fmt.Sprint(want) {
				t.Errorf("got removals %q, want %q", removed, want)
			}
		}
		d <- insert(1, a)
		d <- insert(1, b) // replaces a
		d <- insert(2, c)
		check("1=a (outstanding 0)")
		d <- remove(2)
		check("1=a (outstanding 0)", "2=c (outstanding 0)")
		if err := bal.Close(); err != nil {
			t.Fatal(err)
		}
		check("1=a (outstanding 0)", "2=c (outstanding 0)", "1=b (outstanding 0)")
	})
}

// A RoundRobin's endpoints are tower.Services; a handler for another type
// is refused when the balancer is built, naming both types.
func TestRemovalHandlerTypes(t *testing.T) {
	var got []int
	rr := balance.NewRoundRobin(discover.NewList(backend("a"), backend("b")),
		balance.WithRemovalHandler(func(key int, _ tower.Service[string, string]) { got = append(got, key) }))
	rr.Close()
	slices.Sort(got)
	if fmt.Sprint(got) != "[0 1]" {
		t.Errorf("Close of a RoundRobin: removed %v, want [0 1]", got)
	}
	want := "balance.NewRoundRobin: the removal handler is a func(int, load.Service[string,string]), want a func(int, tower.Service[string,string])"
	towertest.Panics(t, want, func() {
		balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](), balance.WithRemovalHandler(func(int, endpoint) {}))
	})
	towertest.Panics(t, "balance.WithRemovalHandler: nil handler", func() { balance.WithRemovalHandler[int, endpoint](nil) })
}
