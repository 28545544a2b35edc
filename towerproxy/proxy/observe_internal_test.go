package proxy

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerhttp"
)

// What the metrics cost a request allocates nothing: the route's counts
// and latency, a backend's, the whole proxy's request, and the sinks the
// middleware report to.
func TestMetricsAllocateNothing(t *testing.T) {
	p := quickProxy(t)
	rt := p.state.Load().routes[0]
	uo := rt.upstream.obs
	b := uo.backend("http://127.0.0.1:1", false)
	if b == nil {
		t.Fatal("the backend has no observer")
	}
	ctx := context.Background()
	res := &http.Response{StatusCode: http.StatusOK}
	allocs := testing.AllocsPerRun(100, func() {
		start := rt.obs.start(ctx)
		rt.obs.done(start, towerhttp.Response{StatusCode: http.StatusOK}, nil)
		b.done(time.Millisecond, res, nil)
		p.obs.http.ObserveRequest(metrics.Request{Status: http.StatusOK, Outcome: metrics.OutcomeServed, Latency: time.Millisecond})
		uo.shed.Add(metrics.Shed, 1)
		uo.retried.Add(metrics.Retried, 1)
		uo.balance.Add(metrics.InFlight, 1)
		uo.limit.Add(metrics.InFlight, 1)
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}

// An adaptive limit sheds callers itself, not only through the LoadShed
// in front of it: one granted a permit too late for the deadline the
// LoadShed's patience set. Those count in towerproxy_shed_total, and in
// the limit's own numbers, as the LoadShed's do.
func TestLimitShedsCounted(t *testing.T) {
	p := quickProxy(t)
	uo := p.state.Load().routes[0].upstream.obs
	a := p.state.Load().admission.obs
	uo.limitSink().Add(metrics.Shed, 1)
	uo.limitSink().Add(metrics.InFlight, 1)
	a.limitSink().Add(metrics.Shed, 1)
	for _, c := range []struct {
		name           string
		limit          *metrics.Counts
		counted        int64 // what the shed counter's mirror holds
		shed, inFlight int64
	}{
		{"upstream", uo.limit, uo.stats.shedLimit.Load(), 1, 1},
		{"admission", &a.limit, p.obs.shed.Load(), 1, 0},
	} {
		if c.counted != 1 || c.limit.Get(metrics.Shed) != c.shed || c.limit.Get(metrics.InFlight) != c.inFlight {
			t.Errorf("%s: shed counted %d, the limit's Shed %d and InFlight %d; want 1, %d and %d",
				c.name, c.counted, c.limit.Get(metrics.Shed), c.limit.Get(metrics.InFlight), c.shed, c.inFlight)
		}
	}
}

// quickProxy returns the Proxy of a quick start to one backend, which
// nothing is sent to, closed when the test ends.
func quickProxy(t *testing.T) *Proxy {
	t.Helper()
	cfg, err := Quick(":0", []string{"http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessLog = "off"
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}
