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
	rp    *httputil.ReverseProxy // the tunnels' proxy, and svc's once in force
	leaf  *switchable            // svc's leaf, which a reload may switch (see reload.go)
	queue time.Duration          // the LoadShed's patience in svc
	drain drain

	// trusted reports whether a peer's forwarding headers are believed:
	// the Proxy's TrustedProxies in force (see forward.go).
	trusted func(netip.Addr) bool
}

// placeholder is the URL host of a request on its way to an upstream's
// balancer, which sends it to a backend of its choice.
const placeholder = "upstream.invalid"

func newUpstream(name string, cfg *Upstream, queue time.Duration, log *slog.Logger) (*upstream, error) {
	u := &upstream{name: name, cfg: cfg, base: baseTransport(cfg), queue: queue}
	d, err := u.discovery()
	if err != nil {
		return nil, err
	}
	client := towerhttp.ClientStack().
		Timeout(time.Duration(cfg.Timeout.Overall)).
		RetryPolicy(retryPolicy(cfg))
	var opts []balance.Option
	if !cfg.Outlier.Off {
		opts = append(opts, balance.WithOutlierDetection(backendFailed, balance.MaxEjectedShare(float64(cfg.Outlier.MaxShare))))
	}
	opts = append(opts, balance.WithErrorHandler(func(err error) {
		log.Warn("proxy: upstream discovery", "upstream", name, "err", err)
	}))
	u.trans = towerhttp.NewBalancedTransport(d, client, opts...)
	u.rp = &httputil.ReverseProxy{
		Rewrite:      u.rewrite,
		Transport:    u.trans,
		ErrorHandler: u.failed,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	svc := towerhttp.ServerStack()
	if alg := algorithm(cfg.Limit); alg != nil {
		svc = svc.LoadShed(loadshed.WithPatience(queue)).AdaptiveLimit(alg)
	}
	u.leaf = new(switchable)
	u.leaf.rp.Store(u.rp)
	u.svc = svc.Wrap(towerhttp.HandlerService(u.leaf))
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
		scheme := "http"
		if strings.HasPrefix(addr, "https://") {
			scheme, addr = "https", strings.TrimPrefix(addr, "https://")
		}
		addr = strings.TrimPrefix(addr, "http://")
		target := &url.URL{Scheme: scheme, Host: addr}
		return towerhttp.NewEndpoint(u.base, target, towerhttp.ClientStack().Timeout(time.Duration(u.cfg.Timeout.Try))), nil
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
func retryPolicy(cfg *Upstream) *towerhttp.RetryPolicy {
	opts := []retry.PolicyOption{retry.WithMaxAttempts(cfg.Retry.Attempts)}
	if cfg.Retry.Attempts > 1 {
		opts = append(opts, retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, float64(cfg.Retry.Budget))))
	}
	return towerhttp.NewRetryPolicy(opts...)
}

// rewrite makes the request to send upstream: to the balancer's
// placeholder host, which the balancer replaces with a backend's, with
// the forwarding headers (see forward.go). ReverseProxy has removed the
// hop-by-hop headers: Connection and those it lists, Keep-Alive, TE
// (but for "trailers"), Trailer, Transfer-Encoding, Upgrade (put back
// when the request upgrades), Proxy-Connection, Proxy-Authenticate and
// Proxy-Authorization. Proxy goes too: no standard header, it is what a
// CGI backend would take for its own outgoing proxy (httpoxy), and so
// does an Upgrade to h2c (see tunnel.go).
func (u *upstream) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = "http"
	pr.Out.URL.Host = placeholder
	if u.cfg.HostHeader == "client" {
		pr.Out.Host = pr.In.Host
	}
	delete(pr.Out.Header, "Proxy")
	if h2cUpgrade(pr.Out.Header) { // see tunnel.go
		delete(pr.Out.Header, "Upgrade")
		delete(pr.Out.Header, "Connection")
	}
	setForwarded(pr, u.trusted)
	setVia(pr) // and Max-Forwards: see hops.go
	setMaxForwards(pr)
}

// failed answers a request the upstream could not, before anything of a
// response went to the client: 413 for a body over max_body_bytes, 408
// for a client that sent its body too slowly, 400 for one whose body is
// malformed or broke off, 504 when the upstream's time ran out, 503 with
// Retry-After when no backend could take it (all ejected, shed, a
// breaker open), 502 for anything else (a connection refused or reset, a
// malformed response). A client that has gone gets nothing, and is no
// backend's failure: towerhttp.Failure does not count a cancellation.
// (Once a response has started, ReverseProxy aborts it instead, with
// http.ErrAbortHandler: the client sees a broken response, never a
// second status line.)
func (u *upstream) failed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil && !slowBody(r):
		return // the client is gone
	case errors.As(err, new(*http.MaxBytesError)):
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
	case errors.Is(err, errSlowBody) || slowBody(r):
		w.Header().Set("Connection", "close")
		http.Error(w, "request body too slow", http.StatusRequestTimeout)
	case errors.Is(err, errClientBody):
		w.Header().Set("Connection", "close")
		http.Error(w, "bad request body", http.StatusBadRequest)
	case errors.Is(err, context.DeadlineExceeded) || tower.IsTimeout(err):
		http.Error(w, "upstream timed out", http.StatusGatewayTimeout)
	case tower.IsOverloaded(err) || tower.IsUnavailable(err) || errors.Is(err, balance.ErrNoEndpoints):
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
