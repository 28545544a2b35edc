package proxy

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerhttp"
)

// A route is a Route in force: what it matches, its rate limit, and the
// towerhttp.Handler that serves what it lets through: the request's
// priority set on its context, then the admission of the whole proxy,
// which sends it on to the route's upstream.
type route struct {
	host, path string
	priority   tower.Priority
	header     string // the priority header, canonical; "" for none
	upstream   *upstream
	keys       tower.Service[*http.Request, towerhttp.Response] // the rate limit; nil for none
	handler    *towerhttp.Handler
	obs        *routeObs
}

// newRoute returns rc in force over u, behind the admission's service,
// with keys its rate limit (nil for none), observed by obs.
func newRoute(rc *Route, cfg *Config, u *upstream, a *admission, keys tower.Service[*http.Request, towerhttp.Response], obs *observer) *route {
	p, _ := tower.ParsePriority(rc.Priority)
	rt := &route{host: strings.ToLower(rc.Host), path: rc.Path, priority: p, upstream: u, keys: keys, obs: obs.route(rc)}
	opts := obs.handlerOptions()
	if h := cfg.Admission.PriorityHeader; h != "" {
		rt.header = http.CanonicalHeaderKey(h)
	}
	if rt.header != "" || rt.priority != tower.PriorityNormal {
		opts = append(opts, towerhttp.WithPriority(rt.priorityOf))
	}
	if cfg.Server.MaxBodyBytes > 0 {
		opts = append(opts, towerhttp.WithMaxBodyBytes(int64(cfg.Server.MaxBodyBytes)))
	}
	rt.handler = towerhttp.NewServiceHandler(a.svc, opts...)
	return rt
}

// priorityOf is r's priority: its header's, if the proxy reads one and r
// has it with a priority's name, or else the route's.
func (rt *route) priorityOf(r *http.Request) tower.Priority {
	if rt.header != "" {
		if v := r.Header[rt.header]; len(v) > 0 {
			if p, err := tower.ParsePriority(v[0]); err == nil {
				return p
			}
		}
	}
	return rt.priority
}

// serve serves r, which rt matched: its rate limit first, so that a
// request over its key's rate is refused before it takes a place in any
// limit, and is refused 429 even when the proxy is overloaded. A refusal
// is counted as the route's, and noted in the request's record.
func (rt *route) serve(w http.ResponseWriter, r *http.Request) {
	if rt.admit(w, r) {
		rt.handler.ServeHTTP(w, r)
	}
}

// admit reports whether r is within its key's rate, if the route has a
// rate limit, and answers it if not. A request that asks to switch
// protocols is admitted here too: the rate is of requests, handshakes
// among them, though a tunnel stays outside the concurrency limits.
func (rt *route) admit(w http.ResponseWriter, r *http.Request) bool {
	if rt.keys == nil {
		return true
	}
	if _, err := tower.Call(r.Context(), rt.keys, r); err != nil {
		start := rt.obs.start(r.Context())
		rt.obs.done(start, towerhttp.Response{}, err)
		if rec := recordFrom(r.Context()); rec != nil {
			rec.refused(err)
		}
		refuse(w, r, err)
		// Counted with the proxy's requests, as its handler counts those
		// it answers: a refusal here never reaches that handler.
		rt.obs.o.http.ObserveRequest(metrics.Request{Protocol: metrics.HTTPServer, Method: r.Method, Status: towerhttp.StatusCode(err), Outcome: metrics.OutcomeOf(err), Latency: time.Since(start)})
		return false
	}
	return true
}

// refuse answers a request its rate limit refused, as a towerhttp.Handler
// answers one its stack refused: 429 with the Retry-After the limit says
// (the time until the key's next token), or 503 with Retry-After: 1 for a
// fleet limit that fails closed without Redis.
func refuse(w http.ResponseWriter, r *http.Request, err error) {
	if d, ok := tower.RetryAfter(err); ok {
		secs := int64(d / time.Second)
		if d%time.Second > 0 {
			secs++
		}
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	} else if towerhttp.StatusCode(err) == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	towerhttp.WriteError(w, r, err)
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

// notFound answers a request no route matches.
func notFound(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "no route for "+r.Host+r.URL.Path, http.StatusNotFound)
}
