package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towerhttp"
)

// A Proxy serves the proxied traffic of a [Config]: it is the
// http.Handler of the listener, and [Run] puts it on one. Reload puts a
// new Config in force without dropping a request: a request in flight
// finishes with the upstream it started with, and an upstream whose
// configuration did not change keeps its backends, its limits and its
// learning. A Proxy is safe for concurrent use; build one with [New].
type Proxy struct {
	log     *slog.Logger
	state   atomic.Pointer[state]
	mu      sync.Mutex // serializes Reload and Close
	closed  bool
	closing sync.WaitGroup // upstreams retired and not yet closed
	obs     *observer      // metrics, access log, traces and the live page: see observe.go
}

// state is one Config in force: its routes, its upstreams and the
// admission of the whole proxy.
type state struct {
	cfg       *Config
	routes    []*route
	upstreams map[string]*upstream
	admission *admission
}

// An Option configures a [Proxy].
type Option func(*options)

type options struct {
	log            *slog.Logger
	tracerProvider trace.TracerProvider // WithTracerProvider's; nil: the Config's tracing
}

// WithLogger sets the logger of the proxy's own events (reloads, backends
// that come and go, errors it cannot report to a client); the default is
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	if l == nil {
		panic("proxy.WithLogger: nil logger")
	}
	return func(o *options) { o.log = l }
}

// New returns a Proxy of cfg, which [Load], [Parse] or [Quick] made. It
// starts the upstreams' discovery and health checks; it listens on
// nothing ([Run] does). It returns an error if an upstream cannot be
// built (a TLS file that does not load, say).
func New(cfg *Config, opts ...Option) (*Proxy, error) {
	if cfg == nil {
		return nil, errors.New("proxy.New: nil Config")
	}
	o := options{log: slog.Default()}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("proxy.New: option %d is nil", i)
		}
		opt(&o)
	}
	p := &Proxy{log: o.log}
	var err error
	if p.obs, err = newObserver(p, cfg, &o); err != nil {
		return nil, err
	}
	s, err := p.build(cfg, nil)
	if err != nil {
		p.obs.close(context.Background())
		return nil, err
	}
	p.state.Store(s)
	p.obs.start()
	return p, nil
}

// Config returns the Config in force.
func (p *Proxy) Config() *Config { return p.state.Load().cfg }

// ServeHTTP serves a proxied request: through the admission of the whole
// proxy, to the first route that matches it, through that route's limits
// and its upstream's.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := p.state.Load().admission.handler
	if p.obs.recording() {
		p.obs.serve(w, r, h)
		return
	}
	h.ServeHTTP(w, r)
}

// Reload puts cfg in force. Routes change at once. An upstream whose
// configuration is the same as before is kept as it is; a new or changed
// one is built, and the one it replaces is closed once its requests in
// flight are done. If cfg cannot be built, Reload returns the error and
// the configuration in force stays.
func (p *Proxy) Reload(cfg *Config) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("proxy: Reload after Close")
	}
	old := p.state.Load()
	commit, err := p.obs.reload(cfg)
	if err != nil {
		return err
	}
	s, err := p.build(cfg, old)
	if err != nil {
		return err
	}
	p.state.Store(s)
	commit()
	for name, u := range old.upstreams {
		if s.upstreams[name] != u {
			p.retire(u)
		}
	}
	p.log.Info("proxy: configuration reloaded", "routes", len(cfg.Routes), "upstreams", len(cfg.Upstreams))
	return nil
}

// Close closes the upstreams once their requests in flight are done, and
// waits for that until ctx ends. Requests that come after Close are
// answered 503. The listener's graceful shutdown (http.Server.Shutdown)
// is the caller's, before Close: [Run] does both.
func (p *Proxy) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for _, u := range p.state.Load().upstreams {
			p.retire(u)
		}
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		p.closing.Wait()
		close(done)
	}()
	select {
	case <-done:
		return p.obs.close(ctx)
	case <-ctx.Done():
		p.obs.close(ctx)
		return ctx.Err()
	}
}

// retire closes u once its requests in flight are done. p.mu must be
// held.
func (p *Proxy) retire(u *upstream) {
	p.closing.Add(1)
	u.drain.retire(func() {
		defer p.closing.Done()
		u.close()
	})
}

// build makes the state of cfg, keeping the upstreams of old whose
// configuration is the same.
func (p *Proxy) build(cfg *Config, old *state) (*state, error) {
	s := &state{cfg: cfg, upstreams: map[string]*upstream{}}
	var made []*upstream
	fail := func(err error) (*state, error) {
		for _, u := range made {
			u.close()
		}
		return nil, err
	}
	for name, uc := range cfg.Upstreams {
		if old != nil {
			if u := old.upstreams[name]; u != nil && reflect.DeepEqual(u.cfg, uc) {
				s.upstreams[name] = u
				continue
			}
		}
		u, err := newUpstream(name, uc, time.Duration(*cfg.Admission.Queue), p.log, p.obs)
		if err != nil {
			return fail(fmt.Errorf("upstream %q: %w", name, err))
		}
		made = append(made, u)
		s.upstreams[name] = u
	}
	for i := range cfg.Routes {
		rt := newRoute(&cfg.Routes[i], s.upstreams[cfg.Routes[i].Upstream])
		rt.obs = p.obs.route(&cfg.Routes[i])
		s.routes = append(s.routes, rt)
	}
	if old != nil && old.admission.same(cfg) {
		s.admission = old.admission
	} else {
		s.admission = newAdmission(cfg, p.obs)
	}
	s.admission.current = &p.state
	return s, nil
}

// admission is the protection of the whole proxy: a towerhttp.Handler
// whose stack (LoadShed > the adaptive limit) wraps the dispatch to the
// routes of the state in force.
type admission struct {
	limit          string
	queue          Duration
	priorityHeader string
	maxBody        Size
	handler        *towerhttp.Handler
	current        *atomic.Pointer[state]
	obs            *admissionObs
}

// same reports whether cfg's admission is a's.
func (a *admission) same(cfg *Config) bool {
	return a.limit == cfg.Admission.Limit && a.queue == *cfg.Admission.Queue && a.priorityHeader == cfg.Admission.PriorityHeader && a.maxBody == cfg.Server.MaxBodyBytes
}

func newAdmission(cfg *Config, obs *observer) *admission {
	a := &admission{limit: cfg.Admission.Limit, queue: *cfg.Admission.Queue, priorityHeader: cfg.Admission.PriorityHeader, maxBody: cfg.Server.MaxBodyBytes}
	alg := algorithm(cfg.Admission.Limit)
	a.obs = obs.admission(alg != nil)
	stack := obs.serverStack()
	if alg != nil {
		// The whole proxy's limit: the process itself is what it
		// protects, so its own scheduling delay is not the backends'.
		stack = stack.LoadShed(loadshed.WithPatience(time.Duration(*cfg.Admission.Queue)), a.obs.loadShed()).
			AdaptiveLimit(alg, adaptive.WithOwnDelay(adaptive.SchedDelay()), adaptive.WithBounds(1, 100_000), adaptive.WithInitial(1000), a.obs.adaptive())
	}
	opts := append([]towerhttp.HandlerOption{towerhttp.WithPriority(a.priority)}, obs.handlerOptions()...)
	if cfg.Server.MaxBodyBytes > 0 {
		opts = append(opts, towerhttp.WithMaxBodyBytes(int64(cfg.Server.MaxBodyBytes)))
	}
	a.handler = towerhttp.NewServiceHandler(stack.Wrap(tower.ServiceFunc[*http.Request, towerhttp.Response](a.dispatch)), opts...)
	return a
}

// priority is a request's priority: its header's, if the proxy reads one
// and the request has it, or else its route's.
func (a *admission) priority(r *http.Request) tower.Priority {
	if a.priorityHeader != "" {
		if v := r.Header.Get(a.priorityHeader); v != "" {
			if p, err := tower.ParsePriority(v); err == nil {
				return p
			}
		}
	}
	if rt := a.current.Load().match(r); rt != nil {
		return rt.priority
	}
	return tower.PriorityNormal
}

// dispatch sends r to the first route of the state in force that matches
// it, and answers 404 if none does. A request that finds the upstream it
// matched retired by a reload looks again in the new state.
func (a *admission) dispatch(ctx context.Context, r *http.Request) (towerhttp.Response, error) {
	for {
		rt := a.current.Load().match(r)
		if rt == nil {
			return tower.Call(ctx, notFound, r)
		}
		if !rt.upstream.drain.enter() {
			continue // retired meanwhile: the state in force is newer
		}
		start := rt.obs.start(ctx)
		res, err := tower.Call(ctx, rt.svc, r)
		rt.upstream.drain.leave()
		rt.obs.done(start, res, err)
		return res, err
	}
}

var notFound = towerhttp.HandlerService(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "no route for "+r.Host+r.URL.Path, http.StatusNotFound)
}))

// algorithm returns the adaptive algorithm named, or nil for "off".
func algorithm(name string) func() adaptive.Algorithm {
	switch name {
	case "gradient2":
		return adaptive.Gradient2()
	case "vegas":
		return adaptive.Vegas()
	case "aimd":
		return adaptive.AIMD()
	}
	return nil
}

// A route is a Route in force: what it matches, and the service that
// serves it: its limits, then its upstream's.
type route struct {
	host, path string
	priority   tower.Priority
	upstream   *upstream
	svc        tower.Service[*http.Request, towerhttp.Response]
	obs        *routeObs
}

func newRoute(rc *Route, u *upstream) *route {
	p, _ := tower.ParsePriority(rc.Priority)
	rt := &route{host: strings.ToLower(rc.Host), path: rc.Path, priority: p, upstream: u, svc: u.svc}
	if rc.RateLimit != nil {
		rt.svc = rateLimited(rc.RateLimit, rt.svc)
	}
	return rt
}

// match returns the first route that matches r, or nil.
func (s *state) match(r *http.Request) *route {
	host := r.Host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	for _, rt := range s.routes {
		if (rt.host == "" || strings.EqualFold(rt.host, host)) && strings.HasPrefix(r.URL.Path, rt.path) {
			return rt
		}
	}
	return nil
}

// drain counts an upstream's requests in flight, and closes it once it is
// retired and none is left. Its word counts the requests in twos, and its
// low bit says the upstream is retired.
type drain struct {
	n    atomic.Int64
	once sync.Once
	done func()
}

// enter counts a request in, unless the upstream is retired.
func (d *drain) enter() bool {
	if d.n.Add(2)&1 != 0 {
		d.leave()
		return false
	}
	return true
}

// leave counts a request out, and closes a retired upstream left empty.
func (d *drain) leave() {
	if d.n.Add(-2) == 1 {
		d.once.Do(d.done)
	}
}

// retire marks the upstream retired, with done to run once its last
// request has left (at once if none is in flight).
func (d *drain) retire(done func()) {
	d.done = done
	if d.n.Add(1) == 1 {
		d.once.Do(d.done)
	}
}
