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
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towerhttp"
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
	base   *http.Transport
	static *listDiscover // the Discover of a list of backends; nil for DNS or a file
	health *healthChecks // nil: no active check
	retry  *retrier      // nil: a request is tried once
	drain  drain

	backendHost bool // send the backend's host:port as Host
}

// placeholder is the URL host of a request on its way to an upstream's
// balancer, which sends it to a backend of its choice.
const placeholder = "upstream.invalid"

func newUpstream(name string, cfg *Upstream, queue time.Duration, resolver discover.Resolver, log *slog.Logger) (*upstream, error) {
	u := &upstream{
		name: name, cfg: cfg, queue: queue, resolver: resolver, log: log,
		base: baseTransport(cfg), backendHost: cfg.HostHeader == "backend",
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
		balance.WithRemovalHandler(func(_ string, e endpoint) {
			if u.health != nil {
				u.health.remove(e)
			}
		}),
	}
	if !cfg.Outlier.Off {
		opts = append(opts, balance.WithOutlierDetection(towerhttp.Failure, balance.MaxEjectedShare(float64(cfg.Outlier.MaxShare))))
	}
	u.retry = newRetrier(cfg)
	u.trans = towerhttp.NewBalancedTransport(d, u.clientStack(), opts...)
	rp := &httputil.ReverseProxy{
		Rewrite:      u.rewrite,
		Transport:    u.trans,
		ErrorHandler: u.failed,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	var h http.Handler = rp
	if u.retry != nil {
		h = u.retry.replayable(rp)
	}
	svc := towerhttp.ServerStack()
	if alg := algorithm(cfg.Limit); alg != nil {
		svc = svc.LoadShed(loadshed.WithPatience(queue)).AdaptiveLimit(alg)
	}
	u.svc = svc.Wrap(towerhttp.HandlerService(h))
	return u, nil
}

// clientStack is the stack over the balancer, the first layer outermost:
// the overall timeout, the retries, the hedge, and a LoadShed that fails a
// try at once (with the admission's patience) when no backend is ready:
// all down, ejected or behind an open breaker.
func (u *upstream) clientStack() tower.Layer[*http.Request, *http.Response] {
	s := towerhttp.ClientStack().Timeout(time.Duration(u.cfg.Timeout.Overall))
	if u.cfg.Retry.Attempts > 1 {
		s = s.RetryPolicy(u.retry)
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
// from DNS): its health gate, its breaker, the try's timeout, the load
// that the balancer compares, in that order, the first outermost.
func (u *upstream) endpoint(addr string) (endpoint, error) {
	scheme := "http"
	if rest, ok := strings.CutPrefix(addr, "https://"); ok {
		scheme, addr = "https", rest
	}
	target := &url.URL{Scheme: scheme, Host: strings.TrimPrefix(addr, "http://")}
	s := towerhttp.ClientStack()
	var c *checker
	if u.health != nil {
		c = u.health.checker(u.base, target.String(), u.name)
		s = s.Layer(tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
			return &gated{inner: inner, c: c}
		}))
	}
	if b := u.cfg.Breaker; b != nil {
		s = s.CircuitBreaker(towerhttp.Failure, breaker.WithConsecutiveFailures(b.Failures),
			breaker.WithOpenDelay(time.Duration(b.Delay), time.Duration(b.MaxDelay)))
	}
	s = s.Timeout(time.Duration(u.cfg.Timeout.Try))
	var opts []towerhttp.EndpointOption
	if u.backendHost {
		opts = append(opts, towerhttp.WithTargetHost())
	}
	e := towerhttp.NewEndpoint(u.base, target, s, opts...)
	if c != nil {
		u.health.add(e, c)
	}
	return e, nil
}

// report logs what the balancer drops: ejections, and errors of the
// discovery.
func (u *upstream) report(err error) {
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
// the forwarding headers. The Host is the client's, or the backend's,
// which the endpoint sets (towerhttp.WithTargetHost).
func (u *upstream) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = "http"
	pr.Out.URL.Host = placeholder
	pr.Out.Host = pr.In.Host
	forwarded(pr)
}

// forwarded sets X-Forwarded-For, -Host and -Proto, and Forwarded, for the
// request's client.
func forwarded(pr *httputil.ProxyRequest) {
	client := ""
	if ap, err := netip.ParseAddrPort(pr.In.RemoteAddr); err == nil {
		client = ap.Addr().String()
	}
	prior := pr.In.Header["X-Forwarded-For"]
	xff := strings.Join(prior, ", ")
	if xff != "" {
		xff += ", "
	}
	pr.Out.Header["X-Forwarded-For"] = []string{xff + client}
	proto := "http"
	if pr.In.TLS != nil {
		proto = "https"
	}
	pr.Out.Header.Set("X-Forwarded-Host", pr.In.Host)
	pr.Out.Header.Set("X-Forwarded-Proto", proto)
}

// failed answers a request the upstream could not: 503 when no backend
// could take it, 504 when the time ran out, 502 otherwise.
func (u *upstream) failed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return // the client is gone
	case errors.Is(err, context.DeadlineExceeded) || tower.IsTimeout(err):
		http.Error(w, "upstream timed out", http.StatusGatewayTimeout)
	case tower.IsOverloaded(err) || tower.IsUnavailable(err):
		w.Header().Set("Retry-After", "1")
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	default:
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}
}

// close stops the upstream's discovery, balancer and health checks, and
// its connections.
func (u *upstream) close() {
	u.trans.Close()
	if u.health != nil {
		u.health.close()
	}
	u.base.CloseIdleConnections()
}
