// Package towerotel records the measurements of this module's middleware
// and adapters as OpenTelemetry metrics: [NewSink] returns a
// [metrics.Sink] to give to the metrics layer and to each middleware's
// WithMetrics option, and [NewRequestSink] a [metrics.RequestSink] to give
// to towerhttp.WithRequestMetrics and to towergrpc's WithServerMetrics
// and WithClientMetrics.
//
//	meter := provider.Meter("github.com/towergo/tower")
//	limited, err := towerotel.NewSink(meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
//	if err != nil {
//		return err
//	}
//	svc := limit.NewConcurrency(handler, 100, limit.WithMetrics(limited))
//
//	requests, err := towerotel.NewRequestSink(meter)
//	if err != nil {
//		return err
//	}
//	srv := &http.Server{Handler: towerhttp.NewHandler(mux, protect, towerhttp.WithRequestMetrics(requests))}
//
// # Instruments
//
// A Sink records to these instruments of its meter, with the attributes
// given to [WithAttributes] (a Prometheus exporter turns the names into
// the ones on the right, and the attributes into labels, dots into
// underscores):
//
//	tower.inflight   Int64ObservableUpDownCounter  {request}  tower_inflight
//	tower.waiting    Int64ObservableUpDownCounter  {request}  tower_waiting
//	tower.queued     Int64ObservableUpDownCounter  {request}  tower_queued
//	tower.shed       Int64ObservableCounter        {request}  tower_shed_total
//	tower.timed_out  Int64ObservableCounter        {request}  tower_timed_out_total
//	tower.retried    Int64ObservableCounter        {request}  tower_retried_total
//	tower.hedged     Int64ObservableCounter        {request}  tower_hedged_total
//	tower.excluded   Int64ObservableUpDownCounter  {address}  tower_excluded
//	tower.limit      Int64ObservableUpDownCounter  {request}  tower_limit
//	tower.calls      Int64ObservableCounter        {call}     tower_calls_total      + tower.outcome
//	tower.latency    Float64Histogram              s          tower_latency_seconds  + tower.outcome
//
// Package metrics says what each one counts and which middleware reports
// it. tower.calls and tower.latency carry [OutcomeKey], the call's
// [metrics.Outcome]: "served", "error", "shed", "throttled", "timed_out"
// or "canceled"; a latency panel filters tower_outcome="served", so that
// calls shed in microseconds do not pull its percentiles down. Sinks made
// from one meter share its instruments: give each layer of a stack a Sink
// of its own with a "layer" attribute, and one dashboard shows where in
// the stack requests wait, queue and are turned away.
//
// What exists at zero: from the first collection after NewSink, every
// counter above of the Sink, with its attributes, at 0: the eight kinds'
// (those its middleware never reports too), and tower.calls for each of
// the six outcomes. The latency histogram has no series until its first
// latency: the OpenTelemetry SDK keeps a histogram's series only for the
// attribute sets recorded, and has no way to make one at zero. Its
// series of an outcome appears with the first call of that outcome, and
// its count equals tower.calls' for that outcome from then on; so rate()
// alerts count on tower.calls (tower_calls_total), which is there before
// the first call is shed.
//
// A RequestSink records to these, with the attributes given to
// [WithAttributes]; the duration histograms are those of OpenTelemetry's
// semantic conventions, version 1.43.0 (HTTP stable, RPC release
// candidate), with their names, units, descriptions and advised buckets:
//
//	http.server.request.duration  Float64Histogram        s          http_server_request_duration_seconds
//	rpc.server.call.duration      Float64Histogram        s          rpc_server_call_duration_seconds
//	rpc.client.call.duration      Float64Histogram        s          rpc_client_call_duration_seconds
//	tower.requests                Int64ObservableCounter  {request}  tower_requests_total  + tower.protocol, tower.outcome
//
// Each HTTP request's duration has:
//
//	http.request.method        the method, if known (DefaultKnownMethods, WithKnownMethods), or "_OTHER"
//	http.route                 the ServeMux pattern's path, "/items/{id}", if it matched one
//	http.response.status_code  the status sent, if one was
//	url.scheme                 "http" or "https"
//	error.type                 a request not served: its outcome, "shed", "throttled",
//	                             "timed_out", "canceled" or "error" (a component-specific
//	                             identifier, which the convention allows, and which says more
//	                             than the 503 it was answered with); a request served with a
//	                             5xx: the status, "500"; else none
//	tower.outcome              the outcome, always
//
// Each RPC's duration has:
//
//	rpc.system.name           "grpc"
//	rpc.method                the full method without its slash, "pkg.Service/Method"
//	                            (the convention's fully-qualified name; rpc.service is gone)
//	rpc.response.status_code  the status code's name: "OK", "RESOURCE_EXHAUSTED"
//	error.type                the status code's name, if the convention counts it as an
//	                            error: on a server UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED,
//	                            INTERNAL, UNAVAILABLE and DATA_LOSS, on a client any but OK,
//	                            and a code gRPC does not define on both; else, for an RPC
//	                            shed, throttled or timed out, the outcome ("shed": a
//	                            server's RESOURCE_EXHAUSTED is no error of the convention's,
//	                            but no success either); else none
//	tower.outcome             the outcome, always
//
// The histograms' counts are the requests by outcome, method, route and
// status: one instrument serves a RED dashboard. tower.requests counts
// them by protocol and outcome alone, and is there at zero from the first
// collection for every outcome of the protocols [WithProtocols] names
// (all three by default): routes are not known in advance, so the
// requests a histogram counts have series only once seen, and rate()
// alerts use tower_requests_total. A meter made with
// metric.WithSchemaURL("https://opentelemetry.io/schemas/1.43.0") says
// which version of the conventions its instruments follow.
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
// imports the package builds only the OpenTelemetry API, and of its
// semantic conventions package the attribute keys.
//
// # Cost
//
// Counts are kept in the Sink, one atomic counter per kind and per outcome
// spread over 16 cache lines (about 1 KiB each), and reported by one
// callback per Sink when the reader collects: an Add on the request path
// is one atomic addition and allocates nothing, where a synchronous
// instrument's Add looks its attribute set up first; and CPUs adding at
// once add to different lines, so a ConcurrencyLimit reporting to a Sink
// serves more requests on more CPUs (BenchmarkConcurrencyOTelParallel). A
// latency is recorded at once in the histogram (histograms have no
// observable form), with the attribute set of its outcome, made when the
// Sink is, so it allocates nothing either; Observe costs an atomic
// addition and what the SDK's histogram does. Close a Sink that is no
// longer used, so that its callback stops reporting it. The figures are
// in bench/README.md.
//
// A RequestSink's attribute sets depend on the request: it makes the set
// of a method, route, scheme, status and outcome the first time it meets
// them, and keeps it in a sync.Map, so that ObserveRequest of a set seen
// before is a lookup, an atomic addition and the SDK's Record, and
// allocates nothing (BenchmarkObserveRequest). It keeps up to 2000 sets
// per protocol, the SDK's default cardinality limit; a request of a set
// beyond them has its set made, and allocates.
//
// # Tracing
//
// [NewTraceLayer] makes the time a request waits visible in its trace. Put
// outermost, it records, for each request whose context carries a sampled
// span, children of that span (go.opentelemetry.io/otel/trace):
//
//	tower.ready  its wait in Ready, for a permit, a slot, an endpoint
//	tower.queue  its time in a Buffer's queue, if it queued
//	tower.retry  each retry: backoff, Ready and Call; tower.attempt, tower.retry.backoff, tower.retry.cause
//	tower.hedge  its hedge, if one was sent; tower.attempt, tower.hedge.delay
//
// The layer puts a [Tracer] in the context of the request's Call, through
// the core's hook ([metrics.WithTracer]), and the Buffers, Retries and
// Hedges below report to it; what the inner service records during a
// retry or a hedge is a child of that attempt's span. A request without a
// sampled span costs the layer two context lookups and nothing else.
package towerotel
