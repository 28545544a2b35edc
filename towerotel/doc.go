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
//	tower.inflight   Int64ObservableUpDownCounter  {request}  tower_inflight
//	tower.waiting    Int64ObservableUpDownCounter  {request}  tower_waiting
//	tower.queued     Int64ObservableUpDownCounter  {request}  tower_queued
//	tower.shed       Int64ObservableCounter        {request}  tower_shed_total
//	tower.timed_out  Int64ObservableCounter        {request}  tower_timed_out_total
//	tower.retried    Int64ObservableCounter        {request}  tower_retried_total
//	tower.hedged     Int64ObservableCounter        {request}  tower_hedged_total
//	tower.excluded   Int64ObservableUpDownCounter  {address}  tower_excluded
//	tower.latency    Float64Histogram              s          tower_latency_seconds
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
// Counts are kept in the Sink, one atomic counter per kind spread over 16
// cache lines (about 1 KiB each), and reported by one callback per Sink
// when the reader collects: an Add on the request path is one atomic
// addition and allocates nothing, where a synchronous instrument's Add
// looks its attribute set up first; and CPUs adding at once add to
// different lines, so a ConcurrencyLimit reporting to a Sink serves more
// requests on more CPUs (BenchmarkConcurrencyOTelParallel). A latency is
// recorded at once in the histogram (histograms have no observable form),
// with the attributes made into one attribute.Set when the Sink is made, so
// it allocates nothing either; it costs what the SDK's histogram does.
// Close a Sink that is no longer used, so that its callback stops
// reporting it. The figures are in bench/README.md.
package towerotel
