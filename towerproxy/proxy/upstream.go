package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towerproxy/internal/h1"
)

// endpoint is what an upstream's balancer balances over: one backend.
type endpoint = load.Service[*http.Request, *http.Response]

// An upstream is an Upstream in force: the service a route calls (its
// admission, then the reverse proxy), the balanced transport under the
// reverse proxy, and the count of its requests in flight, so that a
// reload closes it only once they are done.
type upstream struct {
	name     string
	cfg      *Upstream     // what u was built of; a reload that keeps u changes only its backends
	queue    time.Duration // the admission's queue, which the limit here waits as long as
	resolver discover.Resolver
	log      *slog.Logger

	svc    tower.Service[*http.Request, towerhttp.Response]
	trans  *towerhttp.BalancedTransport
	base   *http.Transport   // health checks, and what send does not take
	send   http.RoundTripper // the endpoints' sender: h1's, over base
	static *listDiscover     // the Discover of a list of backends; nil for DNS or a file
	health *healthChecks     // nil: no active check
	retry  *retrier          // nil: a request is tried once
	drain  drain
	obs    *upstreamObs

	rp      *httputil.ReverseProxy // the tunnels' proxy
	handler http.Handler           // rp, behind the retries' replay: svc's leaf once in force
	leaf    *switchable            // svc's leaf, which a reload may switch (see reload.go)

	backendHost bool // send the backend's host:port as Host

	// trusted reports whether a peer's forwarding headers are believed:
	// the Proxy's TrustedProxies in force (see forward.go).
	trusted func(netip.Addr) bool
}

// placeholder is the URL host of a request on its way to an upstream's
// balancer, which sends it to a backend of its choice.
const placeholder = "upstream.invalid"

func newUpstream(name string, cfg *Upstream, queue time.Duration, resolver discover.Resolver, log *slog.Logger, obs *observer) (*upstream, error) {
	u := &upstream{
		name: name, cfg: cfg, queue: queue, resolver: resolver, log: log,
		base: baseTransport(cfg), backendHost: cfg.HostHeader == "backend",
		obs: obs.upstream(name, cfg),
	}
	u.send = u.base
	if cfg.Protocol != "h2c" {
		u.send = h1.New(u.base, h1.Options{
			MaxIdlePerHost:        u.base.MaxIdleConnsPerHost,
			IdleTimeout:           u.base.IdleConnTimeout,
			ResponseHeaderTimeout: u.base.ResponseHeaderTimeout,
			Dial:                  u.base.DialContext,
		})
	}
	if cfg.Health.Path != "" {
		u.health = &healthChecks{cfg: cfg.Health, log: log}
	}
	d, err := u.discovery()
	if err != nil {
		return nil, err
	}
	opts := []balance.Option{
		balance.WithFailFast(),
		balance.WithErrorHandler(u.report),
		balance.WithRemovalHandler(func(key string, e endpoint) {
			if u.health != nil {
				u.health.remove(e)
			}
			u.obs.removeBackend(key)
		}),
		balance.WithMetrics(u.obs.balance),
	}
	if !cfg.Outlier.Off {
		opts = append(opts, balance.WithOutlierDetection(backendFailed, balance.MaxEjectedShare(float64(cfg.Outlier.MaxShare))))
	}
	u.retry = newRetrier(cfg, u.obs)
	u.trans = towerhttp.NewBalancedTransport(d, u.clientStack(), opts...)
	u.rp = &httputil.ReverseProxy{
		Rewrite:        u.rewrite,
		ModifyResponse: trimNames,
		Transport:      u.trans,
		BufferPool:     copyBuffers,
		ErrorHandler:   u.failed,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	u.handler = u.rp
	if u.retry != nil {
		u.handler = u.retry.replayable(u.rp, u.failed)
	}
	svc := obs.serverStack()
	if alg := algorithm(cfg.Limit); alg != nil {
		// The upstream's latency, as its limit measures it, includes the
		// proxy's own: its goroutines' wait for a CPU, which says the
		// proxy is busy, not the backends, and is its admission's to
		// limit. A request waits for a permit as long as the admission's
		// queue says (the LoadShed's patience), not the limit's own
		// bound of twice the typical latency. Its bounds are the whole
		// proxy's: the package's default top of 200 held 400 clients of
		// fast backends to 200 at once, and shed the rest after the
		// patience while the backends were idle. It starts at 100, not
		// the package's 20: a limit under the clients of a fresh proxy
		// sheds them until it has grown, for a second or more on
		// backends slower than the patience, and backends that cannot
		// take 100 at once show it in the limit's first windows.
		svc = svc.LoadShed(loadshed.WithPatience(queue), u.obs.loadShed()).
			AdaptiveLimit(alg, adaptive.WithOwnDelay(adaptive.SchedDelay()), adaptive.WithWaitToDeadline(),
				adaptive.WithBounds(1, 100_000), adaptive.WithInitial(upstreamInitialLimit), u.obs.adaptive())
	}
	u.leaf = new(switchable)
	u.leaf.u.Store(u)
	u.svc = svc.Wrap(towerhttp.HandlerService(u.leaf))
	return u, nil
}

// upstreamInitialLimit is an upstream's adaptive limit before it has
// measured anything (see newUpstream).
const upstreamInitialLimit = 100

// copyBuffers lends the reverse proxies the buffers they copy response
// bodies through, 32KiB each, which they would otherwise allocate for
// every response: three quarters of the bytes a request allocated.
var copyBuffers httputil.BufferPool = new(bufferPool)

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if buf, ok := b.p.Get().(*[]byte); ok {
		return *buf
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// clientStack is the stack over the balancer, the first layer outermost:
// the overall timeout, the retries, the hedge, and a LoadShed that fails a
// try at once (with the admission's patience) when no backend is ready:
// all down, ejected or behind an open breaker.
func (u *upstream) clientStack() tower.Layer[*http.Request, *http.Response] {
	s := towerhttp.ClientStack().Timeout(time.Duration(u.cfg.Timeout.Overall))
	if u.cfg.Retry.Attempts > 1 {
		s = s.RetryPolicy(u.obs.policy(u.retry), u.obs.retry())
	}
	if h := u.cfg.Hedge; h != nil {
		s = s.Hedge(hedgePolicy{}, h.MinRequests, h.Percentile/100, time.Duration(h.Period), u.retry.hedgeBudget(u.cfg))
	}
	return s.LoadShed(loadshed.WithPatience(u.queue))
}

// baseTransport is the connection pool to an upstream's backends.
func baseTransport(cfg *Upstream) *http.Transport {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: time.Duration(cfg.Timeout.Try),
		ExpectContinueTimeout: time.Second,
	}
	if cfg.Protocol == "h2c" {
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
	}
	return t
}

// discovery returns the Discover of the upstream's backends.
func (u *upstream) discovery() (discover.Discover[string, endpoint], error) {
	switch {
	case u.cfg.DNS != nil:
		dc := u.cfg.DNS
		if dc.SRV {
			return discover.NewDNSSRV(u.resolver, "", "", dc.Name, time.Duration(dc.Every), u.endpoint), nil
		}
		return discover.NewDNS(u.resolver, dc.Name, dc.Port, time.Duration(dc.Every), u.endpoint), nil
	case u.cfg.File != "":
		return newFileDiscover(u.cfg.File, u.endpoint)
	}
	u.static = newListDiscover(u.endpoint)
	if err := u.static.set(backendList(u.cfg)); err != nil {
		return nil, err
	}
	return u.static, nil
}

// backendList is the upstream's list of backends, as keys.
func backendList(cfg *Upstream) []string {
	list := make([]string, len(cfg.Backends))
	for i, b := range cfg.Backends {
		list[i] = b.String()
	}
	return list
}

// endpoint makes the endpoint of the backend at addr (a URL, or host:port
// from DNS): its observer (see observe_backend.go), its health gate, its
// breaker, the try's timeout, the load that the balancer compares, in
// that order, the first outermost.
func (u *upstream) endpoint(addr string) (endpoint, error) {
	b := u.obs.backend(addr, true)
	scheme := "http"
	if rest, ok := strings.CutPrefix(addr, "https://"); ok {
		scheme, addr = "https", rest
	}
	target := &url.URL{Scheme: scheme, Host: strings.TrimPrefix(addr, "http://")}
	s := towerhttp.ClientStack().Layer(b.layer(u.obs.o))
	var c *checker
	if u.health != nil {
		c = u.health.checker(u.base, target.String(), u.name, &b.down)
		s = s.Layer(tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
			return &gated{inner: inner, c: c}
		}))
	}
	if bc := u.cfg.Breaker; bc != nil {
		s = s.CircuitBreaker(backendFailed, breaker.WithConsecutiveFailures(bc.Failures),
			breaker.WithOpenDelay(time.Duration(bc.Delay), time.Duration(bc.MaxDelay)), breaker.WithMetrics(&b.breaker))
	}
	s = s.Timeout(time.Duration(u.cfg.Timeout.Try))
	var opts []towerhttp.EndpointOption
	if u.backendHost {
		opts = append(opts, towerhttp.WithTargetHost())
	}
	e := towerhttp.NewEndpoint(u.send, target, s, opts...)
	if c != nil {
		u.health.add(e, c)
	}
	return e, nil
}

// report logs what the balancer drops: ejections, and errors of the
// discovery.
func (u *upstream) report(err error) {
	u.obs.balanceEvent(err)
	if ej, ok := errors.AsType[*balance.Ejection[string]](err); ok {
		u.log.Warn("proxy: backend ejected", "upstream", u.name, "backend", ej.Key, "err", err)
		return
	}
	u.log.Warn("proxy: upstream discovery", "upstream", u.name, "err", err)
}

// same reports whether cfg, with the admission's queue, would build u as
// it is, but for its list of backends, which reload can set.
func (u *upstream) same(cfg *Upstream, queue time.Duration) bool {
	if u.queue != queue || (u.static == nil) != (len(cfg.Backends) == 0) {
		return false
	}
	a, b := *u.cfg, *cfg
	a.Backends, b.Backends = nil, nil
	return reflect.DeepEqual(a, b)
}

// update sets the backends of cfg, which u is the same as but for them
// (see same).
func (u *upstream) update(cfg *Upstream) error {
	if u.static == nil {
		return nil
	}
	return u.static.set(backendList(cfg))
}

// rewrite makes the request to send upstream: to the balancer's
// placeholder host, which the balancer replaces with a backend's, with
// the forwarding headers (see forward.go). The Host is the client's, or
// the backend's, which the endpoint sets (towerhttp.WithTargetHost).
// ReverseProxy has removed the hop-by-hop headers: Connection and those
// it lists, Keep-Alive, TE (but for "trailers"), Trailer,
// Transfer-Encoding, Upgrade (put back when the request upgrades),
// Proxy-Connection, Proxy-Authenticate and Proxy-Authorization. Proxy
// goes too: no standard header, it is what a CGI backend would take for
// its own outgoing proxy (httpoxy), and so does an Upgrade to h2c, or
// one an HTTP/1.0 request carries (see tunnel.go).
func (u *upstream) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = "http"
	pr.Out.URL.Host = placeholder
	pr.Out.Host = pr.In.Host
	delete(pr.Out.Header, "Proxy")
	if len(pr.Out.Header["Upgrade"]) > 0 && (ignoresUpgrade(pr.In) || h2cUpgrade(pr.Out.Header)) { // see tunnel.go
		delete(pr.Out.Header, "Upgrade")
		delete(pr.Out.Header, "Connection")
	}
	setForwarded(pr, u.trusted)
	setVia(pr) // and Max-Forwards: see hops.go
	setMaxForwards(pr)
}

// failed answers a request the upstream could not, before anything of a
// response went to the client, with the answer failureOf gives it: as an
// HTTP error, or a gRPC call as a gRPC status. A client that has gone gets
// nothing, and is no backend's failure: towerhttp.Failure does not count
// a cancellation. (Once a response has started, ReverseProxy aborts it
// instead, with http.ErrAbortHandler: the client sees a broken response,
// never a second status line.)
func (u *upstream) failed(w http.ResponseWriter, r *http.Request, err error) {
	u.obs.failed(r, err)
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil && !slowBody(r) {
		return // the client is gone
	}
	f := failureOf(r, err)
	if isGRPC(r) {
		grpcFail(w, f.code, f.msg)
		return
	}
	if f.close {
		w.Header().Set("Connection", "close")
	}
	if f.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, f.msg, f.status)
}

// A failure is the proxy's answer to a request the upstream could not
// answer: its HTTP status, and its gRPC status for a gRPC call.
type failure struct {
	status, code int
	msg          string
	close        bool // the request's body was not read whole: the connection goes
}

// failureOf returns the answer to r, which failed with err: 413
// (RESOURCE_EXHAUSTED) for a body over max_body_bytes, 408 (INTERNAL) for a
// client that sent its body too slowly, 400 (INTERNAL) for one whose body
// is malformed or broke off, 504 (DEADLINE_EXCEEDED) when the upstream's
// time ran out, 503 (UNAVAILABLE) when no backend could take it (all
// ejected, shed, a breaker open), 502 (UNAVAILABLE, which a client may
// retry elsewhere) for anything else: a connection refused or reset, a
// malformed response. A gRPC call whose client's deadline has passed is
// DEADLINE_EXCEEDED whatever the error: a backend may end the call at that
// deadline a moment before the client does.
func failureOf(r *http.Request, err error) failure {
	timedOut := errors.Is(err, context.DeadlineExceeded) || tower.IsTimeout(err)
	switch {
	case isGRPC(r) && (timedOut || deadlinePassed(r)):
		return failure{http.StatusGatewayTimeout, grpcDeadlineExceeded, "upstream timed out", false}
	case errors.As(err, new(*http.MaxBytesError)):
		return failure{http.StatusRequestEntityTooLarge, grpcResourceExhausted, "request body too large", false}
	case errors.Is(err, errSlowBody) || slowBody(r):
		return failure{http.StatusRequestTimeout, grpcInternal, "request body too slow", true}
	case errors.Is(err, errClientBody):
		return failure{http.StatusBadRequest, grpcInternal, "bad request body", true}
	case timedOut:
		return failure{http.StatusGatewayTimeout, grpcDeadlineExceeded, "upstream timed out", false}
	case tower.IsOverloaded(err) || tower.IsUnavailable(err) || errors.Is(err, balance.ErrNoEndpoints):
		return failure{http.StatusServiceUnavailable, grpcUnavailable, "upstream unavailable", false}
	default:
		return failure{http.StatusBadGateway, grpcUnavailable, "bad gateway", false}
	}
}

// close stops the upstream's discovery, balancer and health checks, and
// its connections.
func (u *upstream) close() {
	u.trans.Close()
	if u.health != nil {
		u.health.close()
	}
	if t, ok := u.send.(*h1.Transport); ok {
		t.Close()
	}
	u.base.CloseIdleConnections()
}
