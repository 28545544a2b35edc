package proxy

import (
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/towergo/tower/metrics"
)

// The classes of a status code, the label "class" of the request
// counters: the first digit of the status ("2xx"), "none" for a request
// answered with nothing (its client went away first), and, for a
// backend, "error" for an attempt that got no response.
var classNames = [...]string{"none", "1xx", "2xx", "3xx", "4xx", "5xx", "error"}

const (
	classNone  = 0
	classError = 6
)

// classOf returns the class of status, a status code or 0.
func classOf(status int) int {
	if status < 100 || status > 599 {
		return classNone
	}
	return status / 100
}

// The reasons of the request errors, the label "reason" of
// towerproxy_request_errors_total.
var reasonNames = [...]string{"", "upstream_limit", "rate_limit", "timeout", "canceled", "error", "5xx"}

const (
	reasonNone = iota
	reasonUpstreamLimit
	reasonRateLimit
	reasonTimeout
	reasonCanceled
	reasonError
	reason5xx
)

// The reasons a request is shed, the label "reason" of
// towerproxy_shed_total.
const (
	shedProxyLimit    = "proxy_limit"
	shedUpstreamLimit = "upstream_limit"
	shedRateLimit     = "rate_limit"
)

// promMetrics are the proxy's Prometheus metrics, in a registry of their
// own, so that two proxies in one process (tests, an embedding program)
// do not collide. The counters and histograms are vectors whose children
// the route, upstream and backend observers resolve once, when they are
// made, so that a request pays no label lookup; the gauges are read from
// the state in force when the registry is scraped (see collect).
type promMetrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec // class
	httpDuration prometheus.Histogram

	requests *prometheus.CounterVec   // route, upstream, class
	errors   *prometheus.CounterVec   // route, upstream, reason
	duration *prometheus.HistogramVec // route, upstream

	backendRequests *prometheus.CounterVec   // upstream, backend, class
	backendDuration *prometheus.HistogramVec // upstream, backend

	shed            *prometheus.CounterVec // reason, upstream
	ejections       *prometheus.CounterVec // upstream
	retries         *prometheus.CounterVec // upstream
	budgetExhausted *prometheus.CounterVec // upstream
	failures        *prometheus.CounterVec // upstream, reason
}

// latencyBuckets are the bounds of the latency histograms, in seconds:
// from half a millisecond, where a proxy on loopback answers, to 30s, the
// default overall timeout.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newPromMetrics(o *observer) *promMetrics {
	m := &promMetrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(v)
		return v
	}
	histogram := func(name, help string, labels ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, labels)
		m.reg.MustRegister(v)
		return v
	}
	m.httpRequests = counter("towerproxy_http_requests_total", "Requests the proxy answered, by status class (none: the client went away first), whatever happened to them: shed, unrouted, proxied.", "class")
	m.httpDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "towerproxy_http_request_duration_seconds", Help: "Time from a request's arrival to the end of its answer, of the requests the proxy served (not those it shed or refused).", Buckets: latencyBuckets})
	m.reg.MustRegister(m.httpDuration)
	m.requests = counter("towerproxy_requests_total", "Requests a route sent to its upstream, by status class of the answer.", "route", "upstream", "class")
	m.errors = counter("towerproxy_request_errors_total", "Requests of a route that did not get a good answer, by reason: upstream_limit (shed), rate_limit, timeout, canceled (the client went away), error, 5xx (the backend's, or the proxy's own 502, 503 or 504 when no backend answered).", "route", "upstream", "reason")
	m.duration = histogram("towerproxy_request_duration_seconds", "Time a route's requests took through their upstream, retries included, to the end of the response; requests shed or rate-limited are not in it.", "route", "upstream")
	m.backendRequests = counter("towerproxy_backend_requests_total", "Attempts sent to a backend, by status class of its response (error: no response).", "upstream", "backend", "class")
	m.backendDuration = histogram("towerproxy_backend_request_duration_seconds", "Time from an attempt's start to its response's header, per backend.", "upstream", "backend")
	m.shed = counter("towerproxy_shed_total", "Requests shed, by reason: proxy_limit (the whole proxy's limit; upstream is empty), upstream_limit, rate_limit (a route's limit per key).", "reason", "upstream")
	m.ejections = counter("towerproxy_ejections_total", "Backends the outlier detection of an upstream ejected.", "upstream")
	m.retries = counter("towerproxy_retries_total", "Retries sent to an upstream, not counting first attempts.", "upstream")
	m.budgetExhausted = counter("towerproxy_retry_budget_exhausted_total", "Retries an upstream's retry budget refused.", "upstream")
	m.failures = counter("towerproxy_upstream_failures_total", "Requests the proxy answered itself because no backend of the upstream did: timeout (504), unavailable (503: no backend could take it), bad_gateway (502).", "upstream", "reason")
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), gauges{o})
	return m
}

// The gauges, read from the state in force at each scrape.
var (
	descProxyLimit    = prometheus.NewDesc("towerproxy_limit", "The whole proxy's adaptive concurrency limit now (absent when its limit is off).", nil, nil)
	descProxyInFlight = prometheus.NewDesc("towerproxy_in_flight", "Requests admitted by the whole proxy's limit and not yet answered.", nil, nil)
	descProxyWaiting  = prometheus.NewDesc("towerproxy_waiting", "Requests waiting for a permit of the whole proxy's limit.", nil, nil)
	descLimit         = prometheus.NewDesc("towerproxy_upstream_limit", "An upstream's adaptive concurrency limit now (absent when its limit is off).", []string{"upstream"}, nil)
	descInFlight      = prometheus.NewDesc("towerproxy_upstream_in_flight", "Requests in an upstream's limit now.", []string{"upstream"}, nil)
	descWaiting       = prometheus.NewDesc("towerproxy_upstream_waiting", "Requests waiting for a permit of an upstream's limit.", []string{"upstream"}, nil)
	descEjected       = prometheus.NewDesc("towerproxy_upstream_ejected", "Backends of an upstream its outlier detection holds out now.", []string{"upstream"}, nil)
	descBudget        = prometheus.NewDesc("towerproxy_retry_budget_ratio", "The share of an upstream's requests its retry budget allows as retries.", []string{"upstream"}, nil)
	descBackendState  = prometheus.NewDesc("towerproxy_backend_state", "1 for a backend's state now, 0 for the others: healthy, ejected (by outlier detection), breaker_open, down (failing its health checks).", []string{"upstream", "backend", "state"}, nil)
	descBackendFlight = prometheus.NewDesc("towerproxy_backend_in_flight", "Attempts sent to a backend and not yet answered.", []string{"upstream", "backend"}, nil)
)

// stateNames are the states of a backend, as the live page and the
// metric's label name them.
var stateNames = [...]struct{ page, label string }{
	stateHealthy:     {"healthy", "healthy"},
	stateEjected:     {"ejected", "ejected"},
	stateBreakerOpen: {"breaker open", "breaker_open"},
	stateDown:        {"down", "down"},
}

const (
	stateHealthy = iota
	stateEjected
	stateBreakerOpen
	stateDown
)

// gauges is the collector of the gauges.
type gauges struct{ o *observer }

func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descProxyLimit, descProxyInFlight, descProxyWaiting, descLimit, descInFlight, descWaiting, descEjected, descBudget, descBackendState, descBackendFlight} {
		ch <- d
	}
}

func (g gauges) Collect(ch chan<- prometheus.Metric) {
	s := g.o.p.state.Load()
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	if a := s.admission.obs; a != nil {
		if a.limited {
			gauge(descProxyLimit, a.limit.Get(metrics.Limit))
		}
		gauge(descProxyInFlight, a.limit.Get(metrics.InFlight))
		gauge(descProxyWaiting, a.limit.Get(metrics.Waiting))
	}
	now := time.Now()
	for _, name := range sortedKeys(s.upstreams) {
		uo := s.upstreams[name].obs
		if uo == nil {
			continue
		}
		if uo.limited {
			gauge(descLimit, uo.limit.Get(metrics.Limit), name)
		}
		gauge(descInFlight, uo.limit.Get(metrics.InFlight), name)
		gauge(descWaiting, uo.limit.Get(metrics.Waiting), name)
		gauge(descEjected, uo.balance.counts.Get(metrics.Ejected), name)
		ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, uo.budgetRatio, name)
		for _, b := range uo.backendList() {
			st := b.state(now)
			for i, sn := range stateNames {
				v := int64(0)
				if i == st {
					v = 1
				}
				gauge(descBackendState, v, name, b.addr, sn.label)
			}
			gauge(descBackendFlight, b.inflight.Load(), name, b.addr)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// requestSink is the metrics.RequestSink of the whole proxy's handler
// (towerhttp.WithRequestMetrics): every request the proxy answered.
type requestSink struct {
	classes  [len(classNames)]prometheus.Counter
	duration prometheus.Histogram
	answered atomic.Int64 // for the live page
}

func newRequestSink(m *promMetrics) *requestSink {
	s := &requestSink{duration: m.httpDuration}
	for i := range classError {
		s.classes[i] = m.httpRequests.WithLabelValues(classNames[i])
	}
	return s
}

func (s *requestSink) ObserveRequest(r metrics.Request) {
	s.classes[classOf(r.Status)].Inc()
	s.answered.Add(1)
	if r.Outcome == metrics.OutcomeServed {
		s.duration.Observe(r.Latency.Seconds())
	}
}

// counterSink is a metrics.Sink that adds one Kind's count to a
// Prometheus counter, and to a number the live page reads; it ignores the
// other kinds.
type counterSink struct {
	kind    metrics.Kind
	counter prometheus.Counter
	n       *atomic.Int64 // kept by name, as counter is: see observer
}

func (s *counterSink) Add(k metrics.Kind, delta int64) {
	if k == s.kind {
		s.counter.Add(float64(delta))
		s.n.Add(delta)
	}
}

func (s *counterSink) Observe(time.Duration, metrics.Outcome) {}

// limitSink is the metrics.Sink of an adaptive limit: its numbers go to
// counts, and the callers it sheds itself (granted a permit too late for
// their deadline, which the LoadShed's patience sets) go to shed as well,
// beside the ones the LoadShed in front of it sheds.
type limitSink struct {
	counts *metrics.Counts
	shed   *counterSink
}

func (s limitSink) Add(k metrics.Kind, delta int64) {
	s.counts.Add(k, delta)
	s.shed.Add(k, delta)
}

func (s limitSink) Observe(latency time.Duration, o metrics.Outcome) { s.counts.Observe(latency, o) }

// balanceSink is the metrics.Sink of an upstream's balancer: the
// backends ejected now, and each ejection counted.
type balanceSink struct {
	counts    metrics.Counts
	ejections prometheus.Counter
}

func (s *balanceSink) Add(k metrics.Kind, delta int64) {
	s.counts.Add(k, delta)
	if k == metrics.Ejected && delta > 0 {
		s.ejections.Add(float64(delta))
	}
}

func (s *balanceSink) Observe(time.Duration, metrics.Outcome) {}

// routeLabel is a route's label: its host and path, "api.example.com/v1",
// or its path alone if it matches any host.
func routeLabel(rc *Route) string {
	return strings.ToLower(rc.Host) + rc.Path
}
