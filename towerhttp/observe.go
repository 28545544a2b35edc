package towerhttp

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
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
// The route is the path of the http.ServeMux pattern the request matched,
// without its method ("/items/{id}" for "GET /items/{id}"): the pattern
// the request had when the Handler got it or, when the wrapped handler is
// a ServeMux, the one it matched, or for a request it did not serve would
// have matched (its Handler method). Otherwise (NewServiceHandler, a
// handler that is not a ServeMux) the route is "".
//
// It panics if sink is nil, or holds a nil pointer.
func WithRequestMetrics(sink metrics.RequestSink) HandlerOption {
	if isnil.Is(sink) {
		panic("towerhttp.WithRequestMetrics: nil sink")
	}
	return func(o *handlerOptions) { o.requests = sink }
}

// A router tells the pattern a request would be served under without
// serving it, as http.ServeMux's Handler method does.
type router interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// An observation is what the Handler learns of one request for the request
// metrics.
type observation struct {
	start  time.Duration // a reading of package mono's clock
	ex     *exchange     // nil if the stack was not called
	err    error         // the error the request was answered with
	status int           // the status the error handler sent, or 0
	ended  bool          // the request was answered or refused, not aborted by a panic
}

// serveObserved is ServeHTTP with request metrics, which report r also
// when a panic goes on up to net/http.
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
	h.requests.ObserveRequest(metrics.Request{
		Protocol: metrics.HTTPServer,
		Method:   r.Method,
		Route:    routeOf(h.pattern(r, o.ex)),
		Scheme:   scheme,
		Status:   o.sent(),
		Outcome:  outcome,
		Latency:  latency,
	})
}

// sent returns the status sent for the request, or 0 if none was.
func (o *observation) sent() int {
	if o.status != 0 { // the error handler's
		return o.status
	}
	if o.ex == nil {
		return 0
	}
	if status := int(o.ex.status.Load()); status != 0 {
		return status
	}
	if o.ended && o.err == nil {
		return http.StatusOK // net/http's, for a handler that wrote nothing
	}
	return 0
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

// routeOf returns a ServeMux pattern, "[METHOD ][HOST]/[PATH]", without
// its method.
func routeOf(pattern string) string {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		return strings.TrimLeft(pattern[i:], " \t")
	}
	return pattern
}

// failObserved answers r with the error handler through a pooled
// exchange, which records the status sent, so that the metrics allocate
// nothing.
func (h *Handler) failObserved(w http.ResponseWriter, r *http.Request, err error, o *observation) {
	o.ended, o.err = true, err
	rec := recorders.Get().(*exchange)
	rec.w = w
	defer func() {
		o.status = int(rec.status.Load())
		*rec = exchange{}
		recorders.Put(rec)
	}()
	h.onError(rec, r, err)
}

var recorders = sync.Pool{New: func() any { return new(exchange) }}
