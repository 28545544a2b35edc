package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
)

// The health check is a readiness gate on each backend's endpoint: while
// the backend is down its endpoint is not ready, so the balancer's ready
// cache keeps it pending and no pick sees it, as an ejected endpoint is
// kept. A gate, rather than a Discover that removes the backend and
// inserts it again, keeps the endpoint and what it has learnt (its load,
// its breaker, its place in the outlier detection's count) across a stay
// down, adds no goroutine between the Discover and the balancer, and
// composes with the upstream's discovery of any kind. The price is the
// one permit the ready cache may hold on the endpoint when it goes down:
// the gate's permit checks again when it is called, and refuses a
// request to a backend gone down meanwhile with errBackendDown, which the
// retry policy sends elsewhere, as a refusal that reached no backend.

// errBackendDown is the error of a request that took a backend's permit
// just before its health check marked it down.
var errBackendDown error = unavailable{"towerproxy: backend marked down by its health check"}

// unavailable is an error that says the backend takes no request: see
// tower.IsUnavailable.
type unavailable struct{ msg string }

func (e unavailable) Error() string     { return e.msg }
func (e unavailable) Unavailable() bool { return true }

// A checker is the active health check of one backend: it asks probe every
// interval, from a goroutine of its own, and marks the backend down after
// fall failures in a row, up after rise successes in a row. The backend
// starts up, and is checked at once.
type checker struct {
	probe          func(ctx context.Context) error
	interval       time.Duration
	timeout        time.Duration
	rise, fall     int
	onChange       func(up bool, err error)      // called on the checker's goroutine
	up             atomic.Pointer[chan struct{}] // closed while the backend is up
	stop           chan struct{}
	stopOnce       sync.Once
	passes, misses int // in a row; the checker's goroutine's
}

// closed is a closed channel: the up channel of a backend that is up.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func newChecker(probe func(context.Context) error, h Health, onChange func(bool, error)) *checker {
	c := &checker{
		probe: probe, interval: time.Duration(h.Interval), timeout: time.Duration(h.Timeout),
		rise: h.Rise, fall: h.Fall, onChange: onChange, stop: make(chan struct{}),
	}
	c.up.Store(&closed)
	return c
}

// run checks the backend every interval until stop.
func (c *checker) run() {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		err := c.probe(ctx)
		cancel()
		c.record(err)
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
	}
}

// record counts a check's result, and moves the backend down or up.
func (c *checker) record(err error) {
	if err == nil {
		c.passes, c.misses = c.passes+1, 0
		if !c.isUp() && c.passes >= c.rise {
			down := c.up.Swap(&closed)
			close(*down) // wakes the Readys waiting on it
			c.onChange(true, nil)
		}
		return
	}
	c.passes, c.misses = 0, c.misses+1
	if c.isUp() && c.misses >= c.fall {
		down := make(chan struct{})
		c.up.Store(&down)
		c.onChange(false, err)
	}
}

// isUp reports whether the backend is up.
func (c *checker) isUp() bool { return *c.up.Load() == closed }

// close stops the checks. The backend's gate stays as it is.
func (c *checker) close() { c.stopOnce.Do(func() { close(c.stop) }) }

// wait waits until the backend is up, or ctx ends.
func (c *checker) wait(ctx context.Context) error {
	up := *c.up.Load()
	select {
	case <-up:
		return nil
	default:
	}
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// httpProbe returns the probe of url with base: a GET that passes if it
// is answered 2xx or 3xx.
func httpProbe(base http.RoundTripper, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "towerproxy-health-check")
		res, err := base.RoundTrip(req)
		if err != nil {
			return err
		}
		io.CopyN(io.Discard, res.Body, 4<<10)
		res.Body.Close()
		if res.StatusCode < 200 || res.StatusCode > 399 {
			return &statusError{res.StatusCode}
		}
		return nil
	}
}

// statusError is a check answered with a status that fails it.
type statusError struct{ code int }

func (e *statusError) Error() string { return "answered " + http.StatusText(e.code) }

// gated is a backend's endpoint behind its health check: not ready while
// the backend is down.
type gated struct {
	inner tower.Service[*http.Request, *http.Response]
	c     *checker
	wraps tower.WrapPool[*http.Request, *http.Response]
}

// Ready waits until the backend is up, then asks the endpoint.
func (g *gated) Ready(ctx context.Context) (tower.Permit[*http.Request, *http.Response], error) {
	for {
		if err := g.c.wait(ctx); err != nil {
			return tower.Permit[*http.Request, *http.Response]{}, err
		}
		p, err := g.inner.Ready(ctx)
		if err != nil {
			return p, err
		}
		if g.c.isUp() {
			return g.wraps.Wrap((*gateWrapper)(g), p), nil
		}
		p.Release() // went down while the endpoint was asked
	}
}

// gateWrapper is gated's tower.Wrapper, kept off its method set.
type gateWrapper gated

// CallWrapped sends the request unless the backend went down since its
// permit was granted.
func (w *gateWrapper) CallWrapped(ctx context.Context, inner tower.Permit[*http.Request, *http.Response], req *http.Request) (*http.Response, error) {
	if !w.c.isUp() {
		inner.Release()
		return nil, errBackendDown
	}
	return inner.Call(ctx, req)
}

func (w *gateWrapper) ReleaseWrapped(inner tower.Permit[*http.Request, *http.Response]) {
	inner.Release()
}

// healthChecks are the checkers of an upstream's backends, by endpoint, so
// that each stops when its endpoint leaves the balancer, and all of them
// when the upstream closes.
type healthChecks struct {
	cfg    Health
	log    *slog.Logger
	mu     sync.Mutex
	by     map[endpoint]*checker
	closed bool
}

// checker returns the checker of the backend at target (its scheme and
// host), not yet started: add starts it. It sets down while the backend
// is down, for the metrics and the live page.
func (h *healthChecks) checker(base http.RoundTripper, target, upstream string, down *atomic.Bool) *checker {
	return newChecker(httpProbe(base, target+h.cfg.Path), h.cfg, func(up bool, err error) {
		down.Store(!up)
		if up {
			h.log.Info("proxy: backend up", "upstream", upstream, "backend", target, "checks", h.cfg.Rise)
		} else {
			h.log.Warn("proxy: backend down", "upstream", upstream, "backend", target, "checks", h.cfg.Fall, "err", err)
		}
	})
}

// add registers c as the checker of e and starts it, or stops it at once
// if the upstream is closed.
func (h *healthChecks) add(e endpoint, c *checker) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if h.by == nil {
		h.by = map[endpoint]*checker{}
	}
	h.by[e] = c
	go c.run()
}

// remove stops the checker of e, an endpoint the balancer let go of.
func (h *healthChecks) remove(e endpoint) {
	h.mu.Lock()
	c := h.by[e]
	delete(h.by, e)
	h.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// close stops every checker, and any started later.
func (h *healthChecks) close() {
	h.mu.Lock()
	by := h.by
	h.by, h.closed = nil, true
	h.mu.Unlock()
	for _, c := range by {
		c.close()
	}
}
