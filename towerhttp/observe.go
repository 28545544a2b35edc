package towerhttp

import (
	"io"
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
// without its method ("/items/{id}" for "GET /items/{id}"), taken from the
// first of: the request as the Handler got it, when the Handler serves one
// route of a ServeMux; the request the wrapped handler served, when that
// handler is a ServeMux, once it has returned; else, for a request it did
// not serve (refused, or left running by a Timeout in Abandon mode), the
// wrapped handler's Handler(*http.Request) (http.Handler, string) method,
// as a ServeMux has, which routes without serving. Failing all three
// (NewServiceHandler, a handler that is not a ServeMux), the route is "".
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

// routeRecord is where the leaf leaves the pattern the handler's ServeMux
// matched, for the request metrics. Its exchange's mu guards reached and
// pattern.
type routeRecord struct {
	wanted  bool   // the Handler reports requests; set before the stack's call
	reached bool   // the handler has returned, and pattern is what it matched
	pattern string // the request's Pattern once the handler returned
}

// matched records the pattern of r, the request the handler served, once
// the handler has returned.
func (ex *exchange) matched(r *http.Request) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.route.reached, ex.route.pattern = true, r.Pattern
}

// routed returns the pattern the leaf recorded, and whether it did.
func (ex *exchange) routed() (string, bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.route.pattern, ex.route.reached
}

// An observation is what the Handler learns of one request for the request
// metrics. It lives on ServeHTTP's stack.
type observation struct {
	start  time.Duration // a reading of package mono's clock
	ex     *exchange     // nil if the stack was not called
	err    error         // the error the request was answered with
	status int           // the status the error handler sent, or 0
	ended  bool          // the request was answered or refused, not aborted by a panic
}

// serveObserved is ServeHTTP with request metrics: it reports r also when
// a panic goes on up to net/http.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request) {
	o := observation{start: mono.Now()}
	defer h.observe(r, &o)
	h.serve(w, r, &o)
}

// observe reports r to the sink.
func (h *Handler) observe(r *http.Request, o *observation) {
	latency := mono.Now() - o.start
	outcome := metrics.OutcomeError // a panic aborted the response
	if o.ended {
		outcome = metrics.OutcomeOf(o.err)
	}
	h.requests.ObserveRequest(metrics.Request{
		Protocol: metrics.HTTPServer,
		Method:   r.Method,
		Route:    routeOf(h.pattern(r, o.ex)),
		Scheme:   scheme(r),
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
// or "": see WithRequestMetrics. ex is the request's exchange, or nil if
// the stack was not called.
func (h *Handler) pattern(r *http.Request, ex *exchange) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	if ex != nil {
		if p, ok := ex.routed(); ok {
			return p
		}
	}
	if h.router != nil {
		_, p := h.router.Handler(r)
		return p
	}
	return ""
}

// routeOf returns the route of a ServeMux pattern, "[METHOD ][HOST]/[PATH]":
// the pattern without its method.
func routeOf(pattern string) string {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		return strings.TrimLeft(pattern[i:], " \t")
	}
	return pattern
}

// scheme returns the scheme r came with.
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// failObserved answers r with the error handler through a pooled writer
// that records the status it sends, so that the metrics allocate nothing.
func (h *Handler) failObserved(w http.ResponseWriter, r *http.Request, err error, o *observation) {
	o.ended, o.err = true, err
	rec := statusWriters.Get().(*statusWriter)
	rec.ResponseWriter = w
	defer func() {
		o.status = rec.status
		*rec = statusWriter{}
		statusWriters.Put(rec)
	}()
	h.onError(rec, r, err)
}

// statusWriters pools the writers of failObserved.
var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// A statusWriter is a ResponseWriter that records the status sent
// through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 && code >= 200 { // 1xx are not the response's status
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// ReadFrom keeps the sendfile path of net/http's writer.
func (s *statusWriter) ReadFrom(src io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{s.ResponseWriter}, src)
}

// Flush sends what was written so far, the status included.
func (s *statusWriter) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap returns the ResponseWriter underneath, for
// http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
