package proxy

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/towergo/tower"
)

// A record is what the access log and the trace learn of one request as
// it goes through the proxy: the route and upstream dispatch sent it to,
// the backends its attempts went to, why it was retried, shed or failed,
// and the status and bytes of its response.
//
// It is the request's context, below which the stacks find it
// ([recordFrom]), and the ResponseWriter the proxy's handler writes to.
// Like the contexts of towerhttp, a record is never reused: a context
// derived from it (a hedge's, an abandoned attempt's) may outlive the
// request. The proxy makes one per request only when it writes an access
// log or traces.
type record struct {
	context.Context
	w     http.ResponseWriter
	start time.Time

	// Written by the handler's writes, which towerhttp's exchange orders
	// before the handler returns; read after it has.
	status   int
	bytes    int64
	hijacked bool

	mu       sync.Mutex // guards what follows: attempts may run on other goroutines
	route    string
	upstream string
	backend  string   // of the last attempt
	attempts int      // sent to a backend
	retried  []string // the cause of each retry
	shed     string   // the limit that shed it
	failure  string   // why it failed
}

// recordKey is the context key under which a record finds itself.
type recordKey struct{}

// Value returns the record itself for recordKey.
func (rec *record) Value(key any) any {
	if key == (recordKey{}) {
		return rec
	}
	return rec.Context.Value(key)
}

// recordFrom returns the record ctx is, or derives from, or nil.
func recordFrom(ctx context.Context) *record {
	rec, _ := ctx.Value(recordKey{}).(*record)
	return rec
}

func (rec *record) routed(route, upstream string) {
	rec.mu.Lock()
	rec.route, rec.upstream = route, upstream
	rec.mu.Unlock()
}

func (rec *record) attempt(backend string) {
	rec.mu.Lock()
	rec.attempts++
	rec.backend = backend
	rec.mu.Unlock()
}

func (rec *record) retry(cause string) {
	rec.mu.Lock()
	rec.retried = append(rec.retried, cause)
	rec.mu.Unlock()
}

func (rec *record) fail(why string) {
	rec.mu.Lock()
	rec.failure = why
	rec.mu.Unlock()
}

// refused notes err, the error the proxy's handler answered the request
// with: shed by the whole proxy's limit if it never reached a route, by
// its upstream's limit if it did, limited by its route's rate limit, or
// failed.
func (rec *record) refused(err error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	switch {
	case tower.IsOverloaded(err) && rec.route == "":
		rec.shed = shedProxyLimit
	case tower.IsOverloaded(err):
		rec.shed = shedUpstreamLimit
	case tower.IsThrottled(err):
		rec.shed = shedRateLimit
	default:
		rec.failure = err.Error()
	}
}

// retryCause describes the result of an attempt that a policy is asked
// to retry: its status, or its error.
func retryCause(res *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	if res != nil {
		return "status " + strconv.Itoa(res.StatusCode)
	}
	return "no response"
}

func (rec *record) Header() http.Header { return rec.w.Header() }

func (rec *record) WriteHeader(code int) {
	if rec.status == 0 && code >= 200 {
		rec.status = code
	}
	rec.w.WriteHeader(code)
}

func (rec *record) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.w.Write(p)
	rec.bytes += int64(n)
	return n, err
}

// Flush sends what was written so far.
func (rec *record) Flush() {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	http.NewResponseController(rec.w).Flush()
}

// Hijack hands the connection over, for an Upgrade: the status sent is
// then 101, which the handler writes on the connection itself.
func (rec *record) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(rec.w).Hijack()
	if err == nil {
		rec.hijacked = true
		if rec.status == 0 {
			rec.status = http.StatusSwitchingProtocols
		}
	}
	return conn, rw, err
}

// Unwrap returns net/http's ResponseWriter, for http.ResponseController.
func (rec *record) Unwrap() http.ResponseWriter { return rec.w }

// serve serves r with h under a record of its own, then writes its line
// in the access log and ends its trace.
func (o *observer) serve(w http.ResponseWriter, r *http.Request, h http.Handler) {
	ctx := r.Context()
	var end func(*record, *http.Request)
	if o.tracing != nil {
		ctx, end = o.tracing.server(ctx, r)
	}
	rec := &record{Context: ctx, w: w, start: time.Now()}
	returned := false
	// Deferred, so that a request whose handler panics (an aborted
	// response) is logged too.
	defer func() {
		if !returned {
			rec.fail("response aborted")
		}
		if end != nil {
			end(rec, r)
		}
		if al := o.access.Load(); al != nil {
			al.write(rec, r, time.Since(rec.start))
		}
	}()
	h.ServeHTTP(rec, r.WithContext(rec))
	returned = true
}
