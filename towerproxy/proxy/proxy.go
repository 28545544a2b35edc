package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towerhttp"
)

// A Proxy serves the proxied traffic of a [Config]: it is the
// http.Handler of the listener, and [Server] puts it on one. Reload puts
// a new Config in force without dropping a request: a request in flight
// finishes with the upstream it started with, and an upstream whose
// configuration did not change keeps its backends, its limits and its
// learning. A Proxy is safe for concurrent use; build one with [New].
type Proxy struct {
	log      *slog.Logger
	resolver discover.Resolver
	state    atomic.Pointer[state]
	mu       sync.Mutex // serializes Reload and Close
	closed   bool
	closing  sync.WaitGroup // upstreams retired and not yet closed
	obs      *observer      // metrics, access log, traces and the live page: see observe.go
	serve    http.Handler   // serveHTTP, made once: the handler a record wraps
}

// state is one Config in force: its routes, its upstreams, the admission
// of the whole proxy, and the routes' rate limits.
type state struct {
	cfg       *Config
	routes    []*route
	upstreams map[string]*upstream
	admission *admission
	limits    map[limitKey]tower.Service[*http.Request, towerhttp.Response]
	fleet     *fleet // nil without a Redis section
}

// An Option configures a [Proxy].
type Option func(*options)

type options struct {
	log            *slog.Logger
	resolver       discover.Resolver
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

// WithResolver sets what the upstreams that find their backends in the
// DNS (Upstream.DNS) look names up with; the default is
// net.DefaultResolver.
func WithResolver(r discover.Resolver) Option {
	if r == nil {
		panic("proxy.WithResolver: nil resolver")
	}
	return func(o *options) { o.resolver = r }
}

// New returns a Proxy of cfg, which [Load], [Parse] or [Quick] made. It
// starts the upstreams' discovery and health checks; it listens on
// nothing ([Server] does). It returns an error if an upstream cannot be
// built (a backends file that does not load, say).
func New(cfg *Config, opts ...Option) (*Proxy, error) {
	if cfg == nil {
		return nil, errors.New("proxy.New: nil Config")
	}
	o := options{log: slog.Default(), resolver: net.DefaultResolver}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("proxy.New: option %d is nil", i)
		}
		opt(&o)
	}
	p := &Proxy{log: o.log, resolver: o.resolver}
	p.serve = http.HandlerFunc(p.serveHTTP)
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

// ServeHTTP serves a proxied request: the first route that matches it
// takes it, through its rate limit, then the admission of the whole
// proxy, then its upstream's. A request no route matches is answered 404.
// A request that asks to switch protocols (a WebSocket handshake) goes to
// its route's upstream outside the limits, and becomes a tunnel (see
// tunnel.go). A request body is read under the body timeout, its errors
// the client's (see limits.go).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.obs.recording() {
		p.obs.serve(w, r, p.serve)
		return
	}
	p.serveHTTP(w, r)
}

// serveHTTP is ServeHTTP's, under the request's record if it has one.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if mustClose(r) {
		w = &lastWriter{ResponseWriter: w, http10: r.ProtoMinor == 0} // see hops.go
	}
	if (r.Method == http.MethodTrace || r.Method == http.MethodConnect || r.Method == http.MethodOptions) && answersItself(w, r) {
		return // see hops.go
	}
	if strings.IndexByte(r.RequestURI, '#') >= 0 {
		// A request target has no fragment (RFC 9112, 3.2). net/http
		// takes one for part of the path, which a backend would get as
		// %23: a path the client did not ask for.
		http.Error(w, "a request target has no fragment", http.StatusBadRequest)
		return
	}
	s := p.state.Load()
	if r.Body != nil && r.Body != http.NoBody {
		b := newClientBody(w, r, time.Duration(s.cfg.Server.BodyTimeout))
		r.Body = b
		defer b.end()
	}
	if upgrading(r) {
		p.tunnel(w, r)
		return
	}
	rt := s.match(r)
	if rt == nil {
		notFound(w, r)
		return
	}
	if d, ok := grpcDeadline(r); ok {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		r = r.WithContext(ctx)
	}
	rt.serve(w, r)
}

// trusted reports whether a is among the TrustedProxies of the Config in
// force, whose forwarding headers are believed (see forward.go).
func (p *Proxy) trusted(a netip.Addr) bool {
	return trusts(p.state.Load().cfg.TrustedProxies, a)
}

// Reload puts cfg in force. Routes change at once. An upstream whose
// configuration is the same as before is kept as it is, and one that
// differs only in its list of backends is kept with the new list (new
// backends inserted, then vanished ones removed); a new or changed one is
// built, and the one it replaces is closed once its requests in flight
// are done. A route's rate limit that is the same as before keeps the
// state of its keys. If cfg cannot be built, Reload returns the error and
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
	for name, u := range s.upstreams {
		if old.upstreams[name] == u {
			if err := u.update(cfg.Upstreams[name]); err != nil {
				p.log.Error("proxy: upstream's backends", "upstream", name, "err", err)
			}
		}
	}
	p.state.Store(s)
	commit()
	for name, u := range old.upstreams {
		if s.upstreams[name] != u {
			p.retire(u)
		}
	}
	if old.fleet != nil && old.fleet != s.fleet {
		old.fleet.close()
	}
	p.log.Info("proxy: configuration reloaded", "routes", len(cfg.Routes), "upstreams", len(cfg.Upstreams))
	return nil
}

// Close closes the upstreams once their requests in flight are done, and
// waits for that until ctx ends. Requests that come after Close are
// answered 503. The listener's graceful shutdown (http.Server.Shutdown)
// is the caller's, before Close: [Server] does both.
func (p *Proxy) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		s := p.state.Load()
		for _, u := range s.upstreams {
			p.retire(u)
		}
		if s.fleet != nil {
			s.fleet.close()
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

// build makes the state of cfg, keeping what it can of old's: the
// upstreams that are the same but for their backends (which Reload then
// sets), the admission, the rate limits, the Redis client.
func (p *Proxy) build(cfg *Config, old *state) (*state, error) {
	s := &state{cfg: cfg, upstreams: map[string]*upstream{}, limits: map[limitKey]tower.Service[*http.Request, towerhttp.Response]{}}
	if old == nil {
		old = &state{}
	}
	queue := time.Duration(*cfg.Admission.Queue)
	var made []*upstream
	for name, uc := range cfg.Upstreams {
		if u := old.upstreams[name]; u != nil && u.same(uc, queue) {
			s.upstreams[name] = u
			continue
		}
		u, err := newUpstream(name, uc, queue, p.resolver, p.log, p.obs)
		if err != nil {
			for _, u := range made {
				u.close()
			}
			return nil, fmt.Errorf("upstream %q: %w", name, err)
		}
		u.trusted = p.trusted
		u.inherit(old.upstreams[name])
		made = append(made, u)
		s.upstreams[name] = u
	}
	for _, u := range made {
		u.takeOver() // nothing fails from here on (see reload.go)
	}
	// A kept admission is read by the requests in flight: newAdmission
	// sets its state pointer once, and it is not written again.
	if old.admission != nil && old.admission.same(cfg) {
		s.admission = old.admission
	} else {
		s.admission = newAdmission(cfg, &p.state, p.obs)
	}
	if cfg.Redis != nil {
		if s.fleet = old.fleet; s.fleet == nil || s.fleet.cfg != *cfg.Redis {
			s.fleet = newFleet(cfg.Redis)
		}
	}
	for i := range cfg.Routes {
		rc := &cfg.Routes[i]
		s.routes = append(s.routes, newRoute(rc, cfg, s.upstreams[rc.Upstream], s.admission, s.limit(rc, old), p.obs))
	}
	return s, nil
}

// limit returns rc's rate limit, nil for none: old's, if it has the same
// one (and the same Redis for a fleet's), or a new one.
func (s *state) limit(rc *Route, old *state) tower.Service[*http.Request, towerhttp.Response] {
	if rc.RateLimit == nil {
		return nil
	}
	k := limitKey{host: rc.Host, path: rc.Path, limit: *rc.RateLimit}
	l := s.limits[k]
	if l == nil && (!k.limit.Fleet || old.fleet == s.fleet) {
		l = old.limits[k]
	}
	if l == nil {
		if k.limit.Fleet {
			l = s.fleet.fleetLimit(rc.Host+rc.Path, rc.RateLimit)
		} else {
			l = localLimit(rc.RateLimit)
		}
	}
	s.limits[k] = l
	return l
}

// admission is the protection of the whole proxy: LoadShed > the
// adaptive limit, around the dispatch of each request to its route's
// upstream. Every route's handler serves through it.
type admission struct {
	limit   string
	queue   Duration
	svc     tower.Service[*http.Request, towerhttp.Response]
	current *atomic.Pointer[state]
	obs     *admissionObs
}

// same reports whether cfg's admission is a's.
func (a *admission) same(cfg *Config) bool {
	return a.limit == cfg.Admission.Limit && a.queue == *cfg.Admission.Queue
}

// noDrop is the whole proxy's limit's drop classifier: no error is a drop.
// What fails behind it (an upstream's limit shedding, a backend timing
// out) is the upstreams' to limit; counted as the proxy's drops, each
// window with one took a tenth off its limit, 900 to 166 in 8 s under an
// overload of the backends. The proxy's own overload shows in its latency.
func noDrop(error) bool { return false }

func newAdmission(cfg *Config, current *atomic.Pointer[state], obs *observer) *admission {
	a := &admission{limit: cfg.Admission.Limit, queue: *cfg.Admission.Queue, current: current}
	alg := algorithm(cfg.Admission.Limit)
	a.obs = obs.admission(alg != nil)
	stack := obs.serverStack()
	if alg != nil {
		// The whole proxy's limit: the process itself is what it
		// protects, so its own scheduling delay is not the backends'.
		// A request waits for a permit as long as the queue says, as an
		// upstream's does.
		stack = stack.LoadShed(loadshed.WithPatience(time.Duration(*cfg.Admission.Queue)), a.obs.loadShed()).
			AdaptiveLimit(alg, adaptive.WithOwnDelay(adaptive.SchedDelay()), adaptive.WithWaitToDeadline(),
				adaptive.WithBounds(1, 100_000), adaptive.WithInitial(1000), adaptive.WithDropped(noDrop), a.obs.adaptive())
	}
	a.svc = stack.Wrap(tower.ServiceFunc[*http.Request, towerhttp.Response](a.dispatch))
	return a
}

// errClosed is the error of a request that came after Close.
var errClosed error = unavailable{"towerproxy: the proxy is closed"}

// dispatch sends r to its upstream: that of the first route of the state
// in force that matches it (the route that took it, unless a reload
// changed the routes meanwhile). A request that finds the upstream
// retired by a reload looks again in the new state; one that finds it
// retired by Close is refused.
func (a *admission) dispatch(ctx context.Context, r *http.Request) (towerhttp.Response, error) {
	for {
		s := a.current.Load()
		rt := s.match(r)
		if rt == nil {
			return tower.Call(ctx, notFoundService, r)
		}
		if rt.upstream.drain.enter() {
			return rt.call(ctx, r)
		}
		if a.current.Load() == s {
			return towerhttp.Response{}, errClosed
		}
	}
}

// call serves r on rt's upstream, counted in its drain and observed. The
// count is given back by a defer: a response that breaks midway (its
// backend failed after the status went out) panics with
// http.ErrAbortHandler through here, and an upstream whose count stayed
// up would never close.
func (rt *route) call(ctx context.Context, r *http.Request) (towerhttp.Response, error) {
	defer rt.upstream.drain.leave()
	start := rt.obs.start(ctx)
	res, err := tower.Call(ctx, rt.upstream.svc, r)
	rt.obs.done(start, res, err)
	return res, err
}

var notFoundService = towerhttp.HandlerService(http.HandlerFunc(notFound))

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
