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
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
)

// An upstream is an Upstream in force: the service a route calls (its
// admission, then the reverse proxy), the balanced transport under the
// reverse proxy, and the count of its requests in flight, so that a
// reload closes it only once they are done.
type upstream struct {
	name  string
	cfg   *Upstream
	svc   tower.Service[*http.Request, towerhttp.Response]
	trans *towerhttp.BalancedTransport
	base  *http.Transport
	drain drain
	obs   *upstreamObs
}

// placeholder is the URL host of a request on its way to an upstream's
// balancer, which sends it to a backend of its choice.
const placeholder = "upstream.invalid"

func newUpstream(name string, cfg *Upstream, queue time.Duration, log *slog.Logger, obs *observer) (*upstream, error) {
	u := &upstream{name: name, cfg: cfg, base: baseTransport(cfg), obs: obs.upstream(name, cfg)}
	d, err := u.discovery()
	if err != nil {
		return nil, err
	}
	client := towerhttp.ClientStack().
		Timeout(time.Duration(cfg.Timeout.Overall)).
		RetryPolicy(u.obs.policy(retryPolicy(cfg, u.obs)), u.obs.retry())
	var opts []balance.Option
	if !cfg.Outlier.Off {
		opts = append(opts, balance.WithOutlierDetection(towerhttp.Failure, balance.MaxEjectedShare(float64(cfg.Outlier.MaxShare))))
	}
	opts = append(opts, u.obs.balanceOptions()...)
	opts = append(opts, balance.WithErrorHandler(func(err error) {
		u.obs.balanceEvent(err)
		log.Warn("proxy: upstream discovery", "upstream", name, "err", err)
	}))
	u.trans = towerhttp.NewBalancedTransport(d, client, opts...)
	rp := &httputil.ReverseProxy{
		Rewrite:      u.rewrite,
		Transport:    u.trans,
		ErrorHandler: u.failed,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	svc := u.obs.o.serverStack()
	if alg := algorithm(cfg.Limit); alg != nil {
		svc = svc.LoadShed(loadshed.WithPatience(queue), u.obs.loadShed()).AdaptiveLimit(alg, u.obs.adaptive())
	}
	u.svc = svc.Wrap(towerhttp.HandlerService(rp))
	return u, nil
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
func (u *upstream) discovery() (discover.Discover[string, load.Service[*http.Request, *http.Response]], error) {
	endpoint := func(addr string) (load.Service[*http.Request, *http.Response], error) {
		observed := u.obs.backend(addr, true).layer(u.obs.o)
		scheme := "http"
		if strings.HasPrefix(addr, "https://") {
			scheme, addr = "https", strings.TrimPrefix(addr, "https://")
		}
		addr = strings.TrimPrefix(addr, "http://")
		target := &url.URL{Scheme: scheme, Host: addr}
		return towerhttp.NewEndpoint(u.base, target, towerhttp.ClientStack().Layer(observed).Timeout(time.Duration(u.cfg.Timeout.Try))), nil
	}
	switch {
	case u.cfg.DNS != nil:
		dc := u.cfg.DNS
		if dc.SRV {
			return discover.NewDNSSRV(net.DefaultResolver, "", "", dc.Name, time.Duration(dc.Every), endpoint), nil
		}
		return discover.NewDNS(net.DefaultResolver, dc.Name, dc.Port, time.Duration(dc.Every), endpoint), nil
	case u.cfg.File != "":
		return newFileDiscover(u.cfg.File, endpoint)
	}
	changes := make(chan discover.Change[string, load.Service[*http.Request, *http.Response]], len(u.cfg.Backends))
	for _, b := range u.cfg.Backends {
		key := b.String()
		svc, _ := endpoint(key)
		changes <- discover.Change[string, load.Service[*http.Request, *http.Response]]{Kind: discover.Insert, Key: key, Service: svc}
	}
	return discover.Chan[string, load.Service[*http.Request, *http.Response]](changes), nil
}

// retryPolicy is the upstream's retry: its attempts, its budget, and the
// idempotent requests only unless it says all.
func retryPolicy(cfg *Upstream, obs *upstreamObs) *towerhttp.RetryPolicy {
	opts := []retry.PolicyOption{retry.WithMaxAttempts(cfg.Retry.Attempts)}
	if cfg.Retry.Attempts > 1 {
		opts = append(opts, retry.WithBudget(obs.budget(retry.NewTPSBudget(10*time.Second, 10, float64(cfg.Retry.Budget)))))
	}
	return towerhttp.NewRetryPolicy(opts...)
}

// rewrite makes the request to send upstream: to the balancer's
// placeholder host, which the balancer replaces with a backend's, with
// the forwarding headers.
func (u *upstream) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = "http"
	pr.Out.URL.Host = placeholder
	if u.cfg.HostHeader == "client" {
		pr.Out.Host = pr.In.Host
	}
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
	u.obs.failed(r, err)
	switch {
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return // the client is gone
	case errors.Is(err, context.DeadlineExceeded) || tower.IsTimeout(err):
		http.Error(w, "upstream timed out", http.StatusGatewayTimeout)
	case tower.IsOverloaded(err) || errors.Is(err, balance.ErrNoEndpoints):
		w.Header().Set("Retry-After", "1")
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	default:
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}
}

// close stops the upstream's discovery and balancer and its connections.
func (u *upstream) close() {
	u.trans.Close()
	u.base.CloseIdleConnections()
}
