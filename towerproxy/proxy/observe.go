package proxy

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towerproxy/internal/live"
)

// An observer watches a Proxy for its operators, for the Proxy's whole
// life: it keeps the Prometheus metrics, writes the access log, traces
// requests, and samples each second what the live page draws. The
// middleware of the stacks report to its sinks (adaptive.WithMetrics,
// loadshed.WithMetrics, balance.WithMetrics, retry.WithMetrics,
// towerhttp.WithRequestMetrics); what no middleware measures (a route's
// requests by status, a backend's attempts) the proxy's hooks report:
// dispatch to the route observer, the endpoints' first layer to the
// backend observer.
//
// A counter is kept by name (of the route, upstream and backend), not by
// the upstream built from a configuration, so that a reload that
// rebuilds an upstream does not set it back to zero; what is a number
// now (a limit, requests in flight, a backend's state) is read from the
// upstreams in force.
type observer struct {
	p       *Proxy
	m       *promMetrics
	http    *requestSink
	access  atomic.Pointer[accessLog] // nil: no access log
	tracing *tracing                  // nil: no tracing
	history *live.History
	started time.Time
	shed    atomic.Int64 // requests the whole proxy's limit shed, for the live page

	mu    sync.Mutex
	names map[string]*upstreamStats // by upstream name

	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
	err    error // close's
}

// liveKeep is how many frames the live page's history keeps, one a
// second: five minutes.
const liveKeep = 300

func newObserver(p *Proxy, cfg *Config, o *options) (*observer, error) {
	ob := &observer{p: p, history: live.NewHistory(liveKeep), started: time.Now(), names: map[string]*upstreamStats{}}
	ob.m = newPromMetrics(ob)
	ob.http = newRequestSink(ob.m)
	al, err := openAccessLog(cfg.AccessLog)
	if err != nil {
		return nil, err
	}
	ob.access.Store(al)
	if ob.tracing, err = newTracing(cfg.Tracing, o.tracerProvider); err != nil {
		al.close()
		return nil, err
	}
	return ob, nil
}

// recording reports whether requests get a record: for the access log,
// or a trace.
func (o *observer) recording() bool { return o.access.Load() != nil || o.tracing != nil }

// start starts sampling for the live page, once the proxy has its state.
func (o *observer) start() {
	o.stop, o.done = make(chan struct{}), make(chan struct{})
	go o.sampleEvery(time.Second)
}

// reload returns the function that puts cfg's access log in force, once
// the rest of cfg is built; it opens a new log file only if cfg names
// another one.
func (o *observer) reload(cfg *Config) (commit func(), err error) {
	old := o.access.Load()
	if old.target() == cfg.AccessLog {
		return func() {}, nil
	}
	al, err := openAccessLog(cfg.AccessLog)
	if err != nil {
		return nil, err
	}
	return func() {
		o.access.Store(al)
		old.close()
	}, nil
}

// close stops the sampling, flushes the traces and closes the access
// log, the first time it is called; it returns the error of the traces'
// flush, if any, every time.
func (o *observer) close(ctx context.Context) error {
	o.closed.Do(func() {
		if o.stop != nil {
			close(o.stop)
			<-o.done
		}
		if o.tracing != nil {
			o.err = o.tracing.shutdown(ctx)
		}
		o.access.Swap(nil).close()
	})
	return o.err
}

// stats returns the counters of the upstream named, made the first time.
func (o *observer) stats(name string) *upstreamStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.names[name]
	if s == nil {
		s = newUpstreamStats(o.m, name)
		o.names[name] = s
	}
	return s
}

// serverStack is the start of a server stack: the trace layer, when
// requests are traced, which records their waits for a permit and their
// retries in their trace.
func (o *observer) serverStack() stack.Builder[*http.Request, towerhttp.Response] {
	b := towerhttp.ServerStack()
	if o.tracing != nil {
		b = b.Layer(o.tracing.layer())
	}
	return b
}

// An admissionObs observes one admission of the whole proxy: its limit's
// numbers now, and what its LoadShed sheds.
type admissionObs struct {
	limited bool
	limit   metrics.Counts // the adaptive limit's: Limit, InFlight, Waiting
	shed    *counterSink
}

func (o *observer) admission(limited bool) *admissionObs {
	return &admissionObs{limited: limited, shed: &counterSink{kind: metrics.Shed, counter: o.m.shed.WithLabelValues(shedProxyLimit, ""), n: &o.shed}}
}

// limitOptions are the options that make the whole proxy's limit report
// here.
func (a *admissionObs) loadShed() loadshed.Option { return loadshed.WithMetrics(a.shed) }
func (a *admissionObs) adaptive() adaptive.Option { return adaptive.WithMetrics(a.limitSink()) }
func (a *admissionObs) limitSink() limitSink      { return limitSink{&a.limit, a.shed} }

// handlerOptions are the options of the whole proxy's handler: the
// request metrics, and an error handler that tells the request's record
// why the proxy answered it itself.
func (o *observer) handlerOptions() []towerhttp.HandlerOption {
	return []towerhttp.HandlerOption{
		towerhttp.WithRequestMetrics(o.http),
		towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
			if rec := recordFrom(r.Context()); rec != nil {
				rec.refused(err)
			}
			towerhttp.WriteError(w, r, err)
		}),
	}
}

// checkObservability checks the access log and the tracing of c.
func (c *Config) checkObservability(l locator) error {
	if err := checkAccessLog(c.AccessLog); err != nil {
		return l.errorAt("%v", []any{"access_log"}, err)
	}
	if c.Tracing != nil {
		return c.Tracing.check(l)
	}
	return nil
}

// WithTracerProvider makes the proxy trace its requests with tp, whatever
// the Config's tracing section says: for a program that embeds the proxy
// and has its own OpenTelemetry set up, and for tests (an SDK provider
// with an in-memory exporter). The proxy does not shut tp down.
func WithTracerProvider(tp trace.TracerProvider) Option {
	if tp == nil {
		panic("proxy.WithTracerProvider: nil TracerProvider")
	}
	return func(o *options) { o.tracerProvider = tp }
}
