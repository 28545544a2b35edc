package proxy

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerproxy/internal/live"
)

// A backendObs observes one backend of an upstream: the attempts sent to
// it, by the first layer of its endpoint's stack ([backendObs.layer]),
// and its state: ejected by the balancer's outlier detection, its
// breaker open, or down by its health checks.
type backendObs struct {
	addr     string
	refs     int // endpoints of this address in the balancer; upstreamObs.mu guards it
	classes  [len(classNames)]prometheus.Counter
	duration prometheus.Observer

	inflight, requests, errors atomic.Int64
	latency                    live.Histogram
	ejectedUntil               atomic.Int64 // Unix nanoseconds
	// breaker is the sink of the backend's circuit breaker, if its
	// endpoint has one (breaker.WithMetrics(&b.breaker)): Open > 0 while
	// it is open. down is what its active health checks, if it has any,
	// last decided (see upstream.endpoint).
	breaker metrics.Counts
	down    atomic.Bool

	wraps tower.WrapPool[*http.Request, *http.Response]
}

// backend returns the observer of the backend at addr, made (when make
// is true) the first time, for an endpoint the discovery inserts. It
// returns nil for a backend it does not know and make is false.
func (u *upstreamObs) backend(addr string, make bool) *backendObs {
	u.mu.Lock()
	defer u.mu.Unlock()
	b := u.backends[addr]
	if b == nil && make {
		m := u.o.m
		b = &backendObs{addr: addr, duration: m.backendDuration.WithLabelValues(u.stats.name, addr)}
		for i, c := range classNames {
			b.classes[i] = m.backendRequests.WithLabelValues(u.stats.name, addr, c)
		}
		u.backends[addr] = b
	}
	if b != nil && make {
		b.refs++
	}
	return b
}

// removeBackend forgets the backend at addr once the last of its
// endpoints has left the balancer. (A backend replaced under its key is
// inserted before the one it replaces is removed.)
func (u *upstreamObs) removeBackend(addr string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b := u.backends[addr]; b != nil {
		if b.refs--; b.refs <= 0 {
			delete(u.backends, addr)
		}
	}
}

// backendList returns the backends, by address.
func (u *upstreamObs) backendList() []*backendObs {
	u.mu.Lock()
	list := make([]*backendObs, 0, len(u.backends))
	for _, b := range u.backends {
		list = append(list, b)
	}
	u.mu.Unlock()
	slices.SortFunc(list, func(a, b *backendObs) int { return strings.Compare(a.addr, b.addr) })
	return list
}

// state returns the backend's state at now: down by its health checks
// first, then its breaker, then its ejection.
func (b *backendObs) state(now time.Time) int {
	switch {
	case b.down.Load():
		return stateDown
	case b.breaker.Get(metrics.Open) > 0:
		return stateBreakerOpen
	case now.UnixNano() < b.ejectedUntil.Load():
		return stateEjected
	}
	return stateHealthy
}

// layer is the first layer of the backend's endpoint: it counts each
// attempt sent to the backend by the class of its response, times it to
// the response's header, notes it in the request's record, and, when
// requests are traced, records it as a client span whose context goes to
// the backend in traceparent.
func (b *backendObs) layer(o *observer) tower.Layer[*http.Request, *http.Response] {
	return tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
		return &backendService{inner: inner, b: b, o: o}
	})
}

// backendService is the service of a backend's layer.
type backendService struct {
	inner tower.Service[*http.Request, *http.Response]
	b     *backendObs
	o     *observer
}

func (s *backendService) Ready(ctx context.Context) (tower.Permit[*http.Request, *http.Response], error) {
	p, err := s.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return s.b.wraps.Wrap((*backendWrapper)(s), p), nil
}

// backendWrapper is the layer's tower.Wrapper, kept off its method set.
type backendWrapper backendService

func (w *backendWrapper) CallWrapped(ctx context.Context, inner tower.Permit[*http.Request, *http.Response], req *http.Request) (*http.Response, error) {
	b := w.b
	if w.o.recording() {
		if rec := recordFrom(ctx); rec != nil {
			rec.attempt(b.addr)
		}
	}
	var end func(*http.Response, error)
	if w.o.tracing != nil {
		req, end = w.o.tracing.attempt(ctx, req, b.addr)
	}
	start := time.Now()
	b.inflight.Add(1)
	res, err := inner.Call(ctx, req)
	b.inflight.Add(-1)
	b.done(time.Since(start), res, err)
	if end != nil {
		end(res, err)
	}
	return res, err
}

func (w *backendWrapper) ReleaseWrapped(inner tower.Permit[*http.Request, *http.Response]) {
	inner.Release()
}

// done counts an attempt that took d and got res or err.
func (b *backendObs) done(d time.Duration, res *http.Response, err error) {
	b.requests.Add(1)
	class := classError
	if err == nil && res != nil {
		class = classOf(res.StatusCode)
	}
	b.classes[class].Inc()
	if class == classError || class == 5 {
		b.errors.Add(1)
	}
	if class != classError {
		b.duration.Observe(d.Seconds())
		b.latency.Observe(d)
	}
}
