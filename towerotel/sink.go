package towerotel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

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
}

// adder is what Int64Counter and Int64UpDownCounter have in common.
type adder interface {
	Add(ctx context.Context, incr int64, options ...metric.AddOption)
}

// Sink is a [metrics.Sink] that records to OpenTelemetry instruments: an
// Int64UpDownCounter each for InFlight, Waiting and Queued, an Int64Counter
// each for Shed, TimedOut, Retried and Hedged, and a Float64Histogram of
// latencies in seconds. Every measurement carries the attributes given
// with [WithAttributes], fixed when the Sink is made, so that recording one
// allocates nothing.
//
// Measurements are recorded with context.Background(): a Sink is not told
// which request they belong to, so they carry no exemplars.
//
// A Sink is safe for concurrent use. Its zero value is not usable; call
// [NewSink].
type Sink struct {
	adders  [metrics.NumKinds]adder
	latency metric.Float64Histogram
	add     []metric.AddOption
	record  []metric.RecordOption
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

// NewSink makes the Sink's instruments with meter, and returns it. Making
// the same instruments again, for the Sink of another layer, returns the
// ones already made, as the SDK does for instruments of one name, kind and
// unit. NewSink returns an error if meter fails to make one, or if an
// option is nil. It panics if meter is nil.
func NewSink(meter metric.Meter, opts ...Option) (*Sink, error) {
	if meter == nil {
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
	var errs []error
	for k, in := range instruments {
		if in.name == "" {
			continue
		}
		var (
			a   adder
			err error
		)
		desc, unit := metric.WithDescription(in.description), metric.WithUnit(in.unit)
		if metrics.Kind(k).UpDown() {
			a, err = meter.Int64UpDownCounter(in.name, desc, unit)
		} else {
			a, err = meter.Int64Counter(in.name, desc, unit)
		}
		errs = append(errs, err)
		s.adders[k] = a
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
	s.add = []metric.AddOption{metric.WithAttributeSet(set)}
	s.record = []metric.RecordOption{metric.WithAttributeSet(set)}
	return s, nil
}

// Add adds delta to the instrument of k. It ignores a Kind it does not
// know.
func (s *Sink) Add(k metrics.Kind, delta int64) {
	if int(k) < len(s.adders) {
		if a := s.adders[k]; a != nil {
			a.Add(context.Background(), delta, s.add...)
		}
	}
}

// Observe records latency, in seconds, in the latency histogram.
func (s *Sink) Observe(latency time.Duration) {
	s.latency.Record(context.Background(), latency.Seconds(), s.record...)
}
