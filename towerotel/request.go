package towerotel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// The instruments a [RequestSink] records to: the duration, in seconds,
// of the requests of a towerhttp.Handler, a towergrpc server interceptor
// and a towergrpc client interceptor, and a counter of requests by
// [ProtocolKey] and [OutcomeKey].
const (
	HTTPServerDurationName = "http.server.request.duration"
	RPCServerDurationName  = "rpc.server.call.duration"
	RPCClientDurationName  = "rpc.client.call.duration"
	RequestsName           = "tower.requests"
)

// ProtocolKey is the attribute of [RequestsName] that says which adapter
// observed the requests, as [metrics.Protocol.String] names it:
// "http-server", "grpc-server" or "grpc-client".
const ProtocolKey = attribute.Key("tower.protocol")

// durations describes each protocol's duration histogram.
var durations = [metrics.NumProtocols]instrument{
	metrics.HTTPServer: {HTTPServerDurationName, "s", "Duration of HTTP server requests."},
	metrics.GRPCServer: {RPCServerDurationName, "s", "Measures the duration of an incoming Remote Procedure Call (RPC)."},
	metrics.GRPCClient: {RPCClientDurationName, "s", "Measures the duration of an outgoing Remote Procedure Call (RPC)."},
}

// RequestSink is a [metrics.RequestSink] that records each request of the
// HTTP and gRPC adapters as OpenTelemetry's semantic conventions, version
// 1.43.0 (HTTP stable, RPC release candidate), have it: its duration in
// seconds, in its protocol's histogram, with the convention's attributes
// (see the package doc) and [OutcomeKey].
//
// A histogram has series only for the attribute sets it recorded, and
// routes are not known in advance, so requests are also counted by
// protocol and outcome in [RequestsName], at zero from the first
// collection for the protocols of [WithProtocols]: use it for rate()
// alerts. A request of an attribute set seen before allocates nothing, up
// to 2000 sets per protocol (the SDK's default cardinality limit). Make
// the meter with metric.WithSchemaURL("https://opentelemetry.io/schemas/1.43.0")
// to say which version of the conventions its instruments follow.
//
// A RequestSink is safe for concurrent use. Close it when it is no longer
// used, so that its callback stops reporting. Its zero value is not
// usable; call [NewRequestSink].
type RequestSink struct {
	durations [metrics.NumProtocols]metric.Float64Histogram
	counts    [metrics.NumProtocols][metrics.NumOutcomes]atomic.Int64
	seen      [metrics.NumProtocols]atomic.Bool // reported: named by WithProtocols, or a request came
	observe   [metrics.NumProtocols][metrics.NumOutcomes][]metric.ObserveOption
	sets      [metrics.NumProtocols]setCache
	base      []attribute.KeyValue // WithAttributes'
	known     map[string]string    // the HTTP methods known, each to itself

	reg registration // the callback's
}

var _ metrics.RequestSink = (*RequestSink)(nil)

// NewRequestSink makes the RequestSink's instruments with meter, as
// NewSink does, registers the callback that reports its counts, and
// returns it. It returns an error if meter fails to make an instrument or
// register the callback, or if an option is nil. It panics if meter is
// nil, or holds a nil pointer.
func NewRequestSink(meter metric.Meter, opts ...Option) (*RequestSink, error) {
	if guard.IsNil(meter) {
		panic("towerotel.NewRequestSink: nil meter")
	}
	o, err := apply("towerotel.NewRequestSink", opts)
	if err != nil {
		return nil, err
	}
	s := &RequestSink{base: o.attrs}
	methods := o.methods
	if methods == nil {
		methods = DefaultKnownMethods()
	}
	s.known = make(map[string]string, len(methods))
	for _, m := range methods {
		s.known[m] = m
	}
	var errs []error
	for p, in := range durations {
		if in.name == "" {
			continue
		}
		s.durations[p], err = meter.Float64Histogram(in.name,
			metric.WithDescription(in.description),
			metric.WithUnit(in.unit),
			metric.WithExplicitBucketBoundaries(o.buckets...))
		errs = append(errs, err)
	}
	requests, err := meter.Int64ObservableCounter(RequestsName,
		metric.WithDescription("Requests the HTTP and gRPC adapters observed, by protocol and outcome."),
		metric.WithUnit("{request}"))
	for p := metrics.Protocol(1); int(p) < metrics.NumProtocols; p++ {
		for out := metrics.Outcome(1); int(out) < metrics.NumOutcomes; out++ {
			set := attribute.NewSet(append(o.attrs[:len(o.attrs):len(o.attrs)],
				ProtocolKey.String(p.String()), OutcomeKey.String(out.String()))...)
			s.observe[p][out] = []metric.ObserveOption{metric.WithAttributeSet(set)}
		}
		s.seen[p].Store(o.protocols == nil || slices.Contains(o.protocols, p))
	}
	if err = errors.Join(append(errs, err)...); err == nil {
		s.reg.r, err = meter.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
			s.report(ob, requests)
			return nil
		}, requests)
	}
	if err != nil {
		return nil, fmt.Errorf("towerotel.NewRequestSink: %w", err)
	}
	return s, nil
}

// report observes the request counts of each protocol reported.
func (s *RequestSink) report(ob metric.Observer, requests metric.Int64Observable) {
	for p := 1; p < metrics.NumProtocols; p++ {
		if !s.seen[p].Load() {
			continue
		}
		for out := 1; out < metrics.NumOutcomes; out++ {
			ob.ObserveInt64(requests, s.counts[p][out].Load(), s.observe[p][out]...)
		}
	}
}

// ObserveRequest counts r by its protocol and outcome, and records its
// latency, in seconds, in its protocol's duration histogram. It ignores a
// Protocol or an Outcome it does not know.
func (s *RequestSink) ObserveRequest(r metrics.Request) {
	p, out := r.Protocol, r.Outcome
	if p == 0 || int(p) >= metrics.NumProtocols || out == 0 || int(out) >= metrics.NumOutcomes {
		return
	}
	s.counts[p][out].Add(1)
	if !s.seen[p].Load() {
		s.seen[p].Store(true)
	}
	s.durations[p].Record(context.Background(), r.Latency.Seconds(), s.attributes(&r)...)
}

// Close unregisters the callback that reports the RequestSink's counts,
// as [Sink.Close] does.
func (s *RequestSink) Close() error {
	return s.reg.close()
}
