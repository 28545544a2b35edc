package towerotel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/metrics"
)

// The instruments a Sink records to. Up-down counters for the kinds that
// go up and down, counters for the others, and a histogram for latencies.
const (
	InFlightName = "tower.inflight"
	WaitingName  = "tower.waiting"
	QueuedName   = "tower.queued"
	ShedName     = "tower.shed"
	TimedOutName = "tower.timed_out"
	RetriedName  = "tower.retried"
	HedgedName   = "tower.hedged"
	ExcludedName = "tower.excluded"
	LatencyName  = "tower.latency"
)

// DefaultLatencyBuckets are the latency histogram's bucket boundaries, in
// seconds, unless [WithLatencyBuckets] says otherwise: OpenTelemetry's
// advice for HTTP request durations, from 5ms to 10s. (The SDK's own
// default, 0 to 10000, is meant for milliseconds.)
var DefaultLatencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// instrument describes the instrument of one Kind.
type instrument struct {
	name, unit, description string
}

var instruments = [metrics.NumKinds]instrument{
	metrics.InFlight: {InFlightName, "{request}", "Requests from the grant of their reservation to the end of their call."},
	metrics.Waiting:  {WaitingName, "{request}", "Callers waiting in Ready for capacity."},
	metrics.Queued:   {QueuedName, "{request}", "Requests queued in a Buffer or in its worker's hand."},
	metrics.Shed:     {ShedName, "{request}", "Requests a LoadShed turned away."},
	metrics.TimedOut: {TimedOutName, "{request}", "Calls a Timeout ended with ErrElapsed."},
	metrics.Retried:  {RetriedName, "{request}", "Retries a Retry sent."},
	metrics.Hedged:   {HedgedName, "{request}", "Hedges a Hedge sent."},
	metrics.Excluded: {ExcludedName, "{address}", "Addresses a discovery found beyond its cap and left out of its set, as of its last lookup."},
}

// Sink is a [metrics.Sink] that reports to OpenTelemetry instruments: an
// Int64ObservableUpDownCounter each for InFlight, Waiting, Queued and
// Excluded, an Int64ObservableCounter each for Shed, TimedOut, Retried and
// Hedged, and a Float64Histogram of latencies in seconds. Every measurement carries
// the attributes given with [WithAttributes], fixed when the Sink is made.
//
// Counts are kept in the Sink, one atomic counter per Kind spread over
// cache lines, and reported by a callback when the meter's reader
// collects: so an Add on the request path is one atomic addition, where a
// synchronous instrument's would look its attribute set up first, and CPUs
// adding at once do not take turns on one line. A report taken while requests come and go may be off by those in
// flight. A latency goes to the histogram at once, as histograms have no
// observable form; it allocates nothing either.
//
// Measurements carry no request context, so no exemplars. Two Sinks of
// one meter should have different attributes: both report their own
// counts for their attribute set.
//
// A Sink is safe for concurrent use. Close it when it is no longer used,
// so that its callback stops reporting. Its zero value is not usable; call
// [NewSink].
type Sink struct {
	counts  metrics.Counts
	used    [metrics.NumKinds]atomic.Bool // reported only once used, as a synchronous instrument would be
	latency metric.Float64Histogram
	record  []metric.RecordOption
	observe []metric.ObserveOption

	mu  sync.Mutex
	reg metric.Registration // nil once closed
}

var _ metrics.Sink = (*Sink)(nil)

// An Option configures a Sink.
type Option func(*options)

type options struct {
	attrs   []attribute.KeyValue
	buckets []float64
}

// WithAttributes puts attrs on every measurement of the Sink, typically
// the layer it is given to, so that one meter serves every layer of a
// stack: attribute.String("layer", "limit"). By default there are none.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(o *options) { o.attrs = append(o.attrs, attrs...) }
}

// WithLatencyBuckets sets the latency histogram's bucket boundaries, in
// seconds, increasing. The default is [DefaultLatencyBuckets]. A View on
// the MeterProvider overrides either.
func WithLatencyBuckets(bounds ...float64) Option {
	return func(o *options) { o.buckets = append([]float64(nil), bounds...) }
}

// NewSink makes the Sink's instruments with meter, registers the callback
// that reports its counts, and returns it. Making the same instruments
// again, for the Sink of another layer, returns the ones already made, as
// the SDK does for instruments of one name, kind and unit. NewSink returns
// an error if meter fails to make one or to register the callback, or if
// an option is nil. It panics if meter is nil, or holds a nil pointer.
func NewSink(meter metric.Meter, opts ...Option) (*Sink, error) {
	if isnil.Is(meter) {
		panic("towerotel.NewSink: nil meter")
	}
	o := options{buckets: DefaultLatencyBuckets}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("towerotel.NewSink: option %d is nil", i)
		}
		opt(&o)
	}
	s := &Sink{}
	var (
		errs       []error
		observable [metrics.NumKinds]metric.Int64Observable
		all        []metric.Observable
	)
	for k, in := range instruments {
		if in.name == "" {
			continue
		}
		var (
			obs metric.Int64Observable
			err error
		)
		desc, unit := metric.WithDescription(in.description), metric.WithUnit(in.unit)
		if metrics.Kind(k).UpDown() {
			obs, err = meter.Int64ObservableUpDownCounter(in.name, desc, unit)
		} else {
			obs, err = meter.Int64ObservableCounter(in.name, desc, unit)
		}
		errs = append(errs, err)
		observable[k] = obs
		if obs != nil {
			all = append(all, obs)
		}
	}
	var err error
	s.latency, err = meter.Float64Histogram(LatencyName,
		metric.WithDescription("The latency of calls, from Call to its return, as the metrics layer measures it."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(o.buckets...))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("towerotel.NewSink: %w", err)
	}
	set := attribute.NewSet(o.attrs...)
	s.record = []metric.RecordOption{metric.WithAttributeSet(set)}
	s.observe = []metric.ObserveOption{metric.WithAttributeSet(set)}
	s.reg, err = meter.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
		for k, obs := range observable {
			if obs != nil && s.used[k].Load() {
				n := s.counts.Get(metrics.Kind(k))
				if n < 0 && metrics.Kind(k).UpDown() {
					// Read while requests came and went: the count is
					// never below zero, so neither is the report.
					n = 0
				}
				ob.ObserveInt64(obs, n, s.observe...)
			}
		}
		return nil
	}, all...)
	if err != nil {
		return nil, fmt.Errorf("towerotel.NewSink: %w", err)
	}
	return s, nil
}

// Add adds delta to the count of k. It ignores a Kind it does not know.
func (s *Sink) Add(k metrics.Kind, delta int64) {
	if int(k) < len(s.used) {
		s.counts.Add(k, delta)
		if !s.used[k].Load() {
			s.used[k].Store(true)
		}
	}
}

// Observe records latency, in seconds, in the latency histogram.
func (s *Sink) Observe(latency time.Duration) {
	s.latency.Record(context.Background(), latency.Seconds(), s.record...)
}

// Close unregisters the callback that reports the Sink's counts. The
// Sink's counts are no longer reported after it; its latencies still are,
// if it goes on being used. Close is idempotent, and safe to call at the
// same time as any other method.
func (s *Sink) Close() error {
	s.mu.Lock()
	reg := s.reg
	s.reg = nil
	s.mu.Unlock()
	if reg == nil {
		return nil
	}
	return reg.Unregister()
}
