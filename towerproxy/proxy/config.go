package proxy

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is a proxy's whole configuration: where it listens, how it
// protects itself and its upstreams, and where each request goes. A
// Config comes from [Load] (a YAML file, strictly decoded) or [Quick] (a
// listen address and a list of backends); either fills in the defaults
// and checks it, and [New] takes it as it is.
type Config struct {
	// Listen is the address of the proxied traffic, ":8080" by default.
	Listen string `yaml:"listen"`
	// Admin is the address of the admin listener (metrics, the live page,
	// health), "127.0.0.1:9901" by default; "off" turns it off.
	Admin string `yaml:"admin"`
	// TLS, if set, makes Listen serve HTTPS (and HTTP/2) with these files.
	TLS *TLS `yaml:"tls"`
	// H2C makes Listen accept HTTP/2 without TLS (prior knowledge), as
	// gRPC clients without TLS send it, besides HTTP/1.1. It cannot go
	// with TLS, under which HTTP/2 is offered by ALPN.
	H2C bool `yaml:"h2c"`
	// Server bounds what a client may send, and for how long.
	Server Bounds `yaml:"server"`
	// TrustedProxies are the addresses (CIDR prefixes) whose
	// X-Forwarded-For and Forwarded headers are believed: a request from
	// anywhere else has them replaced by its own address.
	TrustedProxies []Prefix `yaml:"trusted_proxies"`
	// Admission is the limit on the whole proxy, and how a request's
	// priority is read.
	Admission Admission `yaml:"admission"`
	// Redis, if set, is where limits shared by a fleet of proxies live.
	Redis *Redis `yaml:"redis"`
	// AccessLog is where each request's line goes: "stdout" (the
	// default), "stderr", "off", or a file's path.
	AccessLog string `yaml:"access_log"`
	// Tracing, if set, traces each request with OpenTelemetry, and
	// sends the traces where it says.
	Tracing *Tracing `yaml:"tracing"`
	// Routes are tried in order; the first that matches a request takes
	// it. A request no route matches is answered 404.
	Routes []Route `yaml:"routes"`
	// Upstreams are the groups of backends that routes send to, by name.
	Upstreams map[string]*Upstream `yaml:"upstreams"`
}

// TLS names a certificate and its key, PEM files.
type TLS struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Bounds are the bounds of what clients may send, and for how long,
// against slow and oversized requests.
type Bounds struct {
	// MaxHeaderBytes bounds a request's header, 1MiB by default.
	MaxHeaderBytes Size `yaml:"max_header_bytes"`
	// MaxBodyBytes bounds a request's body: a longer one is answered 413.
	// 0, the default, is no bound.
	MaxBodyBytes Size `yaml:"max_body_bytes"`
	// ReadHeaderTimeout bounds the reading of a request's header, 10s by
	// default: a client that sends it slowly (slowloris) is cut off.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// BodyTimeout bounds the wait for the next bytes of a request's body,
	// 60s by default: a client that sends nothing for that long is
	// answered 408 and its connection closed. It bounds each wait, not
	// the whole body, as nginx's client_body_timeout does, so that a
	// large upload on a slow link that keeps sending is not cut.
	BodyTimeout Duration `yaml:"body_timeout"`
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request, 2m by default.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// DrainTimeout bounds how long a shutdown waits for the requests in
	// flight to finish, 30s by default.
	DrainTimeout Duration `yaml:"drain_timeout"`
}

// Admission is the protection of the proxy as a whole.
type Admission struct {
	// Limit is the adaptive concurrency limit on all requests together,
	// "gradient2" by default ("vegas", "aimd", or "off").
	Limit string `yaml:"limit"`
	// Queue is how long a request may wait for a permit of a full limit
	// (the whole proxy's or its upstream's) before it is answered 503:
	// 25ms by default. A burst of an instant is served, a full limit does
	// not keep anyone waiting long; 0 sheds at once.
	Queue *Duration `yaml:"queue"`
	// PriorityHeader names the header a request's priority is read from
	// ("low", "normal", "critical"), "" by default: a route's priority,
	// or normal. Set it only where the header comes from a party you
	// trust.
	PriorityHeader string `yaml:"priority_header"`
}

// Redis is the Redis server of the limits shared by a fleet.
type Redis struct {
	// Addr is the server's address, host:port.
	Addr string `yaml:"addr"`
	// Fail says what a limit does when Redis does not answer: "open" (the
	// default: admit) or "closed" (refuse).
	Fail string `yaml:"fail"`
}

// Route sends the requests it matches to an upstream.
type Route struct {
	// Host matches the request's host, without its port; "" matches any.
	Host string `yaml:"host"`
	// Path matches the requests whose path starts with it; "/" (the
	// default) matches any.
	Path string `yaml:"path"`
	// Upstream names the upstream the requests go to.
	Upstream string `yaml:"upstream"`
	// Priority is the requests' priority ("low", "normal", "critical")
	// unless the priority header says otherwise; normal by default.
	Priority string `yaml:"priority"`
	// RateLimit, if set, limits each key's requests on this route.
	RateLimit *RateLimit `yaml:"rate_limit"`
}

// RateLimit limits the requests of each key (a client's address, a
// header's value) to Rate, in bursts of up to Burst: a token bucket per
// key. A request over its key's rate is answered 429 with Retry-After.
type RateLimit struct {
	// Key is what a request's key is: "client_ip" (the default) or
	// "header:Name".
	Key string `yaml:"key"`
	// Rate is how many requests per period, as "100/s" or "6000/m".
	Rate Rate `yaml:"rate"`
	// Burst is how many may come at once, the rate per second by default
	// (at least 1).
	Burst int `yaml:"burst"`
	// Fleet makes the limit the fleet's, kept in Redis, rather than this
	// proxy's.
	Fleet bool `yaml:"fleet"`
}

// Upstream is a group of backends that serve the same thing.
type Upstream struct {
	// Backends lists the backends by URL: http://host:port.
	Backends []URL `yaml:"backends"`
	// DNS, instead of Backends, finds them by a name, resolved again and
	// again.
	DNS *DNS `yaml:"dns"`
	// File, instead of Backends, names a file with one backend URL per
	// line, read again whenever it changes.
	File string `yaml:"file"`
	// Protocol is how the proxy talks to the backends: "http1" (the
	// default) or "h2c" (HTTP/2 without TLS, for gRPC).
	Protocol string `yaml:"protocol"`
	// HostHeader is the Host the backends see: "client" (the default: the
	// request's own) or "backend" (the backend's host:port).
	HostHeader string `yaml:"host_header"`
	// Limit is the adaptive concurrency limit on this upstream,
	// "gradient2" by default ("vegas", "aimd", or "off").
	Limit string `yaml:"limit"`
	// Timeout bounds each try and the whole request.
	Timeout Timeouts `yaml:"timeout"`
	// Retry says which requests are sent again, and how often at most.
	Retry Retry `yaml:"retry"`
	// Health is the active health check; none unless Path is set.
	Health Health `yaml:"health"`
	// Outlier is the passive check: backends that fail are left out a
	// while.
	Outlier Outlier `yaml:"outlier"`
	// Breaker, if set, puts a circuit breaker in front of each backend.
	// There is none by default: see [Breaker].
	Breaker *Breaker `yaml:"breaker"`
	// Hedge, if set, sends a second copy of a request that is slower
	// than most.
	Hedge *Hedge `yaml:"hedge"`
}

// DNS finds an upstream's backends by name.
type DNS struct {
	// Name is resolved for A and AAAA records, or, with SRV, for SRV
	// records, which give each backend's port.
	Name string `yaml:"name"`
	// Port is the backends' port, for A and AAAA records.
	Port int `yaml:"port"`
	// SRV resolves Name for SRV records.
	SRV bool `yaml:"srv"`
	// Every is how often the name is resolved again, 10s by default.
	Every Duration `yaml:"every"`
}

// Timeouts bound the exchanges with an upstream.
type Timeouts struct {
	// Try bounds one try, until the response's header: 10s by default.
	Try Duration `yaml:"try"`
	// Overall bounds a request's tries together, retries and their waits
	// included: 30s by default.
	Overall Duration `yaml:"overall"`
}

// Retry says which requests an upstream's proxy sends again. A request is
// sent again only before anything of its response went to the client.
type Retry struct {
	// Attempts is the most tries of a request, the first included: 2 by
	// default; 1 is no retry.
	Attempts int `yaml:"attempts"`
	// Statuses are the response codes retried, besides errors: 502, 503
	// and 504 by default. A 429 or 503 with Retry-After is retried no
	// sooner than it asks.
	Statuses []int `yaml:"statuses"`
	// Methods is "idempotent" (the default: GET, HEAD, OPTIONS, TRACE,
	// PUT, DELETE, and requests with an Idempotency-Key) or "all".
	Methods string `yaml:"methods"`
	// Budget bounds the retries to this share of the requests, 20% by
	// default, so that retries cannot multiply the load on an upstream
	// that is down.
	Budget Percent `yaml:"budget"`
}

// Health is an upstream's active health check: each backend's Path is
// asked every Interval, and a backend that fails Fall checks in a row is
// left out until it passes Rise in a row, as HAProxy's check does. A
// check passes when the backend answers 2xx or 3xx within Timeout. A
// backend starts healthy, and is checked at once.
type Health struct {
	// Path is what a check asks each backend for, with a GET; no check
	// runs unless it is set.
	Path     string   `yaml:"path"`
	Interval Duration `yaml:"interval"` // 5s by default
	Timeout  Duration `yaml:"timeout"`  // 1s by default
	Rise     int      `yaml:"rise"`     // 2 by default
	Fall     int      `yaml:"fall"`     // 3 by default
}

// Breaker is a circuit breaker per backend (package breaker): after
// Failures failed requests in a row (errors, timeouts, 5xx but 501 and
// 505), the backend gets no request for Delay, then one probe; a probe
// that fails opens it again for twice as long, up to MaxDelay.
//
// There is none unless the section is there (`breaker: {}` takes the
// defaults): the passive check (Outlier) already leaves failing backends
// out, and never more than its share of them, so that an upstream whose
// backends all fail still gets their answers. Breakers have no such cap:
// when every backend fails, every breaker opens and the proxy answers 503
// itself. Add them for backends that fail slowly (each failure costing a
// try's timeout), which are better not asked at all for a while.
type Breaker struct {
	Failures int      `yaml:"failures"`  // 5 by default
	Delay    Duration `yaml:"delay"`     // 5s by default
	MaxDelay Duration `yaml:"max_delay"` // 5m by default
}

// Outlier is an upstream's passive check: a backend whose requests fail
// (errors and 5xx) 5 times in a row is left out for a while, longer each
// time, but never more than MaxShare of the backends at once.
type Outlier struct {
	// Off turns the passive check off.
	Off bool `yaml:"off"`
	// MaxShare bounds the share of backends left out at once, 50% by
	// default.
	MaxShare Percent `yaml:"max_share"`
}

// Hedge sends a second copy of an idempotent request (see Retry.Methods:
// hedges are for idempotent requests whatever it says) that is still
// unanswered after the Percentile of the upstream's latency over the last
// Period, and takes whichever answers first. Nothing is hedged while the
// last Period saw fewer than MinRequests answers. Hedges draw on the
// retries' budget.
type Hedge struct {
	Percentile  float64  `yaml:"percentile"`   // 95 by default
	MinRequests int      `yaml:"min_requests"` // 100 by default
	Period      Duration `yaml:"period"`       // 10s by default
}

// Duration is a time.Duration written as Go writes one ("1.5s", "300ms").
type Duration time.Duration

// Size is a number of bytes, written as a number or with a unit: "512",
// "64KiB", "1MiB", "1GiB".
type Size int64

// Percent is a share written as "20%".
type Percent float64

// URL is a backend's address, http://host:port.
type URL struct{ *url.URL }

// Prefix is a CIDR prefix, "10.0.0.0/8", or one address.
type Prefix struct{ netip.Prefix }

// Rate is a number of requests per period, written "100/s", "6000/m" or
// "1/h".
type Rate struct {
	N   int
	Per time.Duration
}

func (r Rate) String() string { return fmt.Sprintf("%d/%v", r.N, r.Per) }

// parseDuration reads a Duration.
func parseDuration(s string) (Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write it as 1.5s, 300ms or 2m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return Duration(d), nil
}

// parseSize reads a Size.
func parseSize(s string) (Size, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	n, mult := s, int64(1)
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (write it as 512, 64KiB, 1MiB or 1GiB)", s)
	}
	return Size(v * mult), nil
}

// parsePercent reads a Percent.
func parsePercent(s string) (Percent, error) {
	v, ok := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if !ok || err != nil || f < 0 || f > 100 {
		return 0, fmt.Errorf("%q is not a percentage between 0%% and 100%%", s)
	}
	return Percent(f / 100), nil
}

// parseURL reads a backend URL.
func parseURL(s string) (URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return URL{}, fmt.Errorf("%q is not a backend URL (write it as http://host:port)", s)
	}
	u.Path = ""
	return URL{u}, nil
}

// parsePrefix reads a Prefix.
func parsePrefix(s string) (Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return Prefix{p.Masked()}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return Prefix{}, fmt.Errorf("%q is not an address or a CIDR prefix", s)
	}
	return Prefix{netip.PrefixFrom(a, a.BitLen())}, nil
}

// parseRate reads a Rate.
func parseRate(s string) (Rate, error) {
	n, unit, ok := strings.Cut(s, "/")
	v, err := strconv.Atoi(strings.TrimSpace(n))
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[strings.TrimSpace(unit)]
	if !ok || err != nil || v < 1 || per == 0 {
		return Rate{}, fmt.Errorf("%q is not a rate (write it as 100/s, 6000/m or 1/h)", s)
	}
	return Rate{N: v, Per: per}, nil
}
