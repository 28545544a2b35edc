// Package towerotel records the measurements of this module's middleware
// as OpenTelemetry metrics: [NewSink] returns a [metrics.Sink] to give to
// the metrics layer and to each middleware's WithMetrics option.
//
//	meter := provider.Meter("github.com/towergo/tower")
//	limited, err := towerotel.NewSink(meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
//	if err != nil {
//		return err
//	}
//	svc := limit.NewConcurrency(handler, 100, limit.WithMetrics(limited))
//
// # Instruments
//
// A Sink records to these instruments of its meter, with the attributes
// given to [WithAttributes] (a Prometheus exporter turns the names into
// the ones on the right, and the attributes into labels):
//
//	tower.inflight   Int64UpDownCounter  {request}  tower_inflight
//	tower.waiting    Int64UpDownCounter  {request}  tower_waiting
//	tower.queued     Int64UpDownCounter  {request}  tower_queued
//	tower.shed       Int64Counter        {request}  tower_shed_total
//	tower.timed_out  Int64Counter        {request}  tower_timed_out_total
//	tower.retried    Int64Counter        {request}  tower_retried_total
//	tower.hedged     Int64Counter        {request}  tower_hedged_total
//	tower.latency    Float64Histogram    s          tower_latency_seconds
//
// Package metrics says what each one counts and which middleware reports
// it. Sinks made from one meter share its instruments: give each layer of a
// stack a Sink of its own with a "layer" attribute, and one dashboard shows
// where in the stack requests wait, queue and are turned away.
//
// # Why OpenTelemetry
//
// OpenTelemetry's metrics API is the field's standard: it is what
// instrumented libraries in Go record to, it is not tied to one backend,
// and the program, not the library, chooses where the numbers go by
// configuring a MeterProvider: OTLP to a collector, or Prometheus through
// the OpenTelemetry Prometheus exporter (go.opentelemetry.io/otel/exporters/prometheus),
// which the package's Example uses to serve the text a Prometheus server
// scrapes. A Sink written against the Prometheus client directly would
// serve Prometheus alone.
//
// # Why a separate module
//
// Module github.com/towergo/tower has no dependencies, and a program that
// does not want metrics, or wants them elsewhere, should not get
// OpenTelemetry in its build. So the hook is in the core (package metrics,
// a two-method interface, free when unset), and this adapter, which
// requires go.opentelemetry.io/otel/metric, is a module of its own, as
// towergrpc is for gRPC. Its tests and Example also use the OpenTelemetry
// SDK, the Prometheus exporter and the Prometheus client; a program that
// imports the package builds only the OpenTelemetry API.
//
// # Cost
//
// The attributes are made into one attribute.Set when the Sink is made, and
// passed with metric.WithAttributeSet, so recording a measurement allocates
// nothing; with the SDK, an Add costs about what the SDK's lookup of that
// set and its atomic add cost (see the benchmarks).
package towerotel
