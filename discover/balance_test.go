package discover_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// DNS > P2C: the balancer follows the lookups on its own goroutine. A
// failed lookup is reported to the balancer's handler and the endpoints
// found before keep serving; a vanished address gets no more requests.
func TestDNSFeedsP2C(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(
			ips("10.0.0.1", "10.0.0.2"),
			fakeAnswer{err: errors.New("server misbehaving")},
			ips("10.0.0.2", "10.0.0.3"),
		)
		d := discover.NewDNS(r, "backend.internal", 80, time.Second, func(addr string) (load.Service[string, string], error) {
			svc := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return addr, nil })
			return load.NewConstant(svc, 0), nil
		})
		var (
			mu      sync.Mutex
			reports []string
		)
		bal := balance.NewP2C(d, balance.WithErrorHandler(func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, fmt.Sprintf("%v at %v", err, time.Duration(time.Now().UnixNano()-r.start.UnixNano())))
		}))
		defer bal.Close()

		served := func() []string {
			seen := map[string]bool{}
			for range 50 {
				rsp, err := tower.Call(t.Context(), bal, "x")
				if err != nil {
					t.Fatal(err)
				}
				seen[rsp] = true
			}
			var out []string
			for a := range seen {
				out = append(out, a)
			}
			slices.Sort(out)
			return out
		}
		// Ready waits for the first lookup, which the balancer's goroutine
		// starts as soon as it runs. It returns once one endpoint is ready,
		// which may be before the balancer has taken in the second: let it
		// settle before looking at the set.
		if _, err := tower.Call(t.Context(), bal, "x"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := served(); fmt.Sprint(got) != "[10.0.0.1:80 10.0.0.2:80]" {
			t.Errorf("at 0s: served by %v", got)
		}
		time.Sleep(1500 * time.Millisecond)
		if got := served(); fmt.Sprint(got) != "[10.0.0.1:80 10.0.0.2:80]" {
			t.Errorf("after the failed lookup: served by %v, want the last good set", got)
		}
		time.Sleep(time.Second)
		if got := served(); fmt.Sprint(got) != "[10.0.0.2:80 10.0.0.3:80]" {
			t.Errorf("after the third lookup: served by %v", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := "[load balancer discovery error: discover: lookup backend.internal: server misbehaving at 1s]"; fmt.Sprint(reports) != want {
			t.Errorf("got reports %v, want %s", reports, want)
		}
	})
}

// Through a balancer: a resolver answering 20,000
// addresses of endpoints that are never ready made 20,000 endpoints and
// as many goroutines. With the default cap, the balancer holds 1024, its
// error handler hears of the truncation, the metric reads the 18,976 left
// out, and a lookup that finds 100 brings both down.
func TestDNSCapThroughBalancer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The process's goroutines before: those of the test framework, and
		// any that tests before this one left winding down, which can only
		// end meanwhile.
		base := runtime.NumGoroutine()
		all := manyIPs(20000)
		slices.SortFunc(all.addrs, func(a, b string) int { return strings.Compare(a+":80", b+":80") })
		r := newFake(all, ips(all.addrs[:100]...))
		var c metrics.Counts
		d := discover.NewDNS(r, "big.internal", 80, time.Second, func(string) (tower.Service[string, string], error) {
			m, h := towertest.NewMock[string, string]()
			h.Allow(0) // never ready: a goroutine waits for each
			return m, nil
		}, discover.WithMetrics(&c))
		var truncated atomic.Int32
		rr := balance.NewRoundRobin(d, balance.WithErrorHandler(func(err error) {
			if errors.Is(err, discover.ErrTooManyAddresses) {
				truncated.Add(1)
			}
		}))
		defer rr.Close()
		synctest.Wait()
		if n, g := rr.Len(), runtime.NumGoroutine()-base; n != discover.DefaultMaxEndpoints || g > n+10 {
			t.Errorf("got %d endpoints and %d goroutines, want %d and about as many", n, g, discover.DefaultMaxEndpoints)
		}
		if got := c.Get(metrics.Excluded); got != 18976 || truncated.Load() != 1 {
			t.Errorf("got Excluded %d and %d truncations reported, want 18976 and 1", got, truncated.Load())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n, g := rr.Len(), runtime.NumGoroutine()-base; n != 100 || g > n+10 {
			t.Errorf("after the second lookup: got %d endpoints and %d goroutines, want 100 and about as many", n, g)
		}
		if got := c.Get(metrics.Excluded); got != 0 {
			t.Errorf("after the second lookup: got Excluded %d, want 0", got)
		}
	})
}
