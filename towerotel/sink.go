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

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// The instruments a [Sink] records to.
const (
	InFlightName  = "tower.inflight"
	WaitingName   = "tower.waiting"
	QueuedName    = "tower.queued"
	ShedName      = "tower.shed"
	TimedOutName  = "tower.timed_out"
	RetriedName   = "tower.retried"
	HedgedName    = "tower.hedged"
	ExcludedName  = "tower.excluded"
	LimitName     = "tower.limit"
	OpenName      = "tower.breakers.open"
	TrippedName   = "tower.breakers.tripped"
	EjectedName   = "tower.ejected"
	ThrottledName = "tower.throttled"
	CallsName     = "tower.calls"
	LatencyName   = "tower.latency"
)

// OutcomeKey is the attribute that says how a call or a request ended, as
// [metrics.Outcome.String] names it: "served", "error", "shed" and so on.
// A latency panel filters tower_outcome="served", so that calls shed in
// microseconds do not pull its percentiles down.
const OutcomeKey = attribute.Key("tower.outcome")

// DefaultLatencyBuckets returns the latency histograms' bucket boundaries,
// in seconds, unless [WithLatencyBuckets] says otherwise: OpenTelemetry's
// advice for HTTP and RPC durations. Each call returns a new slice.
func DefaultLatencyBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
}

// instrument describes the instrument of one Kind.
type instrument struct {
	name, unit, description string
}

var instruments = [metrics.NumKinds]instrument{
	metrics.InFlight:  {InFlightName, "{request}", "Requests from the grant of their reservation to the end of their call."},
	metrics.Waiting:   {WaitingName, "{request}", "Callers waiting in Ready for capacity."},
	metrics.Queued:    {QueuedName, "{request}", "Requests queued in a Buffer or in its worker's hand."},
	metrics.Shed:      {ShedName, "{request}", "Requests a LoadShed turned away."},
	metrics.TimedOut:  {TimedOutName, "{request}", "Calls a Timeout ended with ErrElapsed."},
	metrics.Retried:   {RetriedName, "{request}", "Retries a Retry sent."},
	metrics.Hedged:    {HedgedName, "{request}", "Hedges a Hedge sent."},
	metrics.Excluded:  {ExcludedName, "{address}", "Addresses a discovery found beyond its cap and left out of its set, as of its last lookup."},
	metrics.Limit:     {LimitName, "{request}", "The concurrency limit an adaptive limiter holds."},
	metrics.Open:      {OpenName, "{breaker}", "Circuit breakers open or half-open."},
	metrics.Tripped:   {TrippedName, "{trip}", "Times a circuit breaker opened."},
	metrics.Ejected:   {EjectedName, "{endpoint}", "Endpoints a balancer's outlier detection holds out of its set."},
	metrics.Throttled: {ThrottledName, "{request}", "Requests a client-side adaptive throttle failed without sending them."},
}

// Sink is a [metrics.Sink] that reports to OpenTelemetry instruments: an
// Int64ObservableUpDownCounter for each Kind that goes up and down, an
// Int64ObservableCounter for each other Kind and one of calls by outcome
// ([CallsName]), and a Float64Histogram of latencies in seconds
// ([LatencyName]). Every measurement carries the attributes of
// [WithAttributes]; calls and latencies also carry [OutcomeKey]. Two Sinks
// of one meter need different attributes, or they report the same series.
//
// Every counter is reported at zero from the first collection after
// NewSink, also for kinds its middleware never reports. The latency
// histogram's series of an outcome appears only with the first call of
// that outcome: alert on [CallsName].
//
// Counts are kept in the Sink and reported by a callback when the reader
// collects: Add is one atomic addition, and a report taken while requests
// come and go may be off by those in flight. Latencies are recorded at
// once, without the request's context, so without exemplars.
//
// A Sink is safe for concurrent use. Close it when it is no longer used,
// so that its callback stops reporting. Its zero value is not usable; call
// [NewSink].
type Sink struct {
	kinds   metrics.Counts                    // the kinds' counts: its Add and Get only
	calls   [metrics.NumOutcomes]atomic.Int64 // the calls observed, by outcome
	latency metric.Float64Histogram
	record  [metrics.NumOutcomes][]metric.RecordOption  // the latencies' attributes, by outcome
	observe []metric.ObserveOption                      // the kinds' attributes
	byCall  [metrics.NumOutcomes][]metric.ObserveOption // the calls' attributes, by outcome

	reg registration // the callback's
}

var _ metrics.Sink = (*Sink)(nil)

// NewSink makes the Sink's instruments with meter, sharing them with the
// Sinks of other layers, registers the callback that reports its counts,
// and returns it. It returns an error if meter fails to make an instrument
// or register the callback, if an option is nil, or if an option applies
// to a RequestSink only. It panics if meter is nil, or holds a nil pointer.
func NewSink(meter metric.Meter, opts ...Option) (*Sink, error) {
	if guard.IsNil(meter) {
		panic("towerotel.NewSink: nil meter")
	}
	o, err := apply("towerotel.NewSink", opts)
	if err != nil {
		return nil, err
	}
	if o.only != "" {
		return nil, fmt.Errorf("towerotel.NewSink: %s applies to a RequestSink only", o.only)
	}
	s := &Sink{}
	calls, err := meter.Int64ObservableCounter(CallsName,
		metric.WithDescription("Calls the metrics layer observed, by outcome."),
		metric.WithUnit("{call}"))
	errs, all := []error{err}, []metric.Observable{calls}
	var observable [metrics.NumKinds]metric.Int64Observable
	for k, in := range instruments {
		if in.name == "" {
			continue
		}
		desc, unit := metric.WithDescription(in.description), metric.WithUnit(in.unit)
		if metrics.Kind(k).UpDown() {
			observable[k], err = meter.Int64ObservableUpDownCounter(in.name, desc, unit)
		} else {
			observable[k], err = meter.Int64ObservableCounter(in.name, desc, unit)
		}
		errs, all = append(errs, err), append(all, observable[k])
	}
	s.latency, err = meter.Float64Histogram(LatencyName,
		metric.WithDescription("The latency of calls, from Call to its return, as the metrics layer measures it."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(o.buckets...))
	s.observe = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(o.attrs...))}
	for out := metrics.Outcome(1); int(out) < metrics.NumOutcomes; out++ {
		set := attribute.NewSet(append(o.attrs[:len(o.attrs):len(o.attrs)], OutcomeKey.String(out.String()))...)
		s.record[out] = []metric.RecordOption{metric.WithAttributeSet(set)}
		s.byCall[out] = []metric.ObserveOption{metric.WithAttributeSet(set)}
	}
	if err = errors.Join(append(errs, err)...); err == nil {
		s.reg.r, err = meter.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
			s.report(ob, &observable, calls)
			return nil
		}, all...)
	}
	if err != nil {
		return nil, fmt.Errorf("towerotel.NewSink: %w", err)
	}
	return s, nil
}

// report observes every count of the Sink, those at zero included.
func (s *Sink) report(ob metric.Observer, observable *[metrics.NumKinds]metric.Int64Observable, calls metric.Int64Observable) {
	for k, obs := range observable {
		if obs == nil {
			continue
		}
		n := s.kinds.Get(metrics.Kind(k))
		if n < 0 && metrics.Kind(k).UpDown() {
			n = 0 // read while requests came and went
		}
		ob.ObserveInt64(obs, n, s.observe...)
	}
	for out := 1; out < metrics.NumOutcomes; out++ {
		ob.ObserveInt64(calls, s.calls[out].Load(), s.byCall[out]...)
	}
}

// Add adds delta to the count of k.
func (s *Sink) Add(k metrics.Kind, delta int64) {
	s.kinds.Add(k, delta)
}

// Observe counts a call of the given outcome, and records its latency, in
// seconds, with [OutcomeKey]. It ignores an Outcome it does not know.
func (s *Sink) Observe(latency time.Duration, outcome metrics.Outcome) {
	if outcome == 0 || int(outcome) >= metrics.NumOutcomes {
		return
	}
	s.calls[outcome].Add(1)
	s.latency.Record(context.Background(), latency.Seconds(), s.record[outcome]...)
}

// Close unregisters the callback that reports the Sink's counts; its
// latencies are still recorded if it goes on being used. Close is
// idempotent, and safe to call concurrently with any other method.
func (s *Sink) Close() error {
	return s.reg.close()
}

// registration is a callback's registration, unregistered once however
// often close is called.
type registration struct {
	once sync.Once
	r    metric.Registration
}

func (g *registration) close() (err error) {
	g.once.Do(func() { err = g.r.Unregister() })
	return err
}
