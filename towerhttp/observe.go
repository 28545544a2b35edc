package towerhttp

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// WithRequestMetrics makes the Handler report each request to sink once it
// has been answered, refused or aborted: a metrics.Request with Protocol
// metrics.HTTPServer, the method and scheme, the status sent (0 if none),
// the outcome of the stack's error (metrics.OutcomeOf: a request the
// handler answered was served, whatever its status), the time ServeHTTP
// took, and the route, as OpenTelemetry's http.server.request.duration
// records them.
//
// The route is the http.ServeMux pattern without its method ("/items/{id}"
// for "GET /items/{id}"): the one the request had when the Handler got it
// or, when the wrapped handler is a ServeMux, the one it matched, or would
// have matched; otherwise "".
//
// It panics if sink is nil, or holds a nil pointer.
func WithRequestMetrics(sink metrics.RequestSink) HandlerOption {
	option.PanicIf(isnil.Is(sink), "towerhttp.WithRequestMetrics: nil sink")
	return func(o *handlerOptions) { o.requests = sink }
}

// A router is an http.ServeMux, whose Handler method tells the pattern a
// request would be served under.
type router interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// An observation is what the Handler learns of a request for the metrics.
type observation struct {
	start  time.Duration // a reading of package mono's clock
	ex     *exchange     // nil if the stack was not called
	err    error         // the error the request was answered with
	status int           // the status the error handler sent, or 0
	ended  bool          // the request was answered or refused, not aborted by a panic
}

// serveObserved is ServeHTTP with request metrics, which report r also
// when a panic goes on up.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request) {
	o := observation{start: mono.Now()}
	defer h.observe(r, &o)
	h.serve(w, r, &o)
}

func (h *Handler) observe(r *http.Request, o *observation) {
	latency := mono.Now() - o.start
	outcome := metrics.OutcomeError // a panic aborted the response
	if o.ended {
		outcome = metrics.OutcomeOf(o.err)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	status := o.status // the error handler's
	if status == 0 && o.ex != nil {
		status = int(o.ex.status.Load())
		if status == 0 && o.ended && o.err == nil {
			status = http.StatusOK // net/http's, for a handler that wrote nothing
		}
	}
	route := h.pattern(r, o.ex)
	if i := strings.IndexAny(route, " \t"); i >= 0 { // "[METHOD ][HOST]/[PATH]"
		route = strings.TrimLeft(route[i:], " \t")
	}
	h.requests.ObserveRequest(metrics.Request{
		Protocol: metrics.HTTPServer,
		Method:   r.Method,
		Route:    route,
		Scheme:   scheme,
		Status:   status,
		Outcome:  outcome,
		Latency:  latency,
	})
}

// pattern returns the ServeMux pattern r was, or would be, served under,
// or "". ex is nil if the stack was not called.
func (h *Handler) pattern(r *http.Request, ex *exchange) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	if ex != nil {
		ex.mu.Lock()
		p, ok := ex.pattern, ex.routed
		ex.mu.Unlock()
		if ok {
			return p
		}
	}
	if h.router != nil {
		_, p := h.router.Handler(r)
		return p
	}
	return ""
}

// recorders are the exchanges fail answers through with request metrics,
// to record the status without an allocation.
var recorders = sync.Pool{New: func() any { return new(exchange) }}
