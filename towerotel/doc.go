// Package towerotel records the measurements of this module's middleware
// and adapters as OpenTelemetry metrics and spans. Start with [NewSink],
// a [metrics.Sink] for the metrics layer and each middleware's WithMetrics
// option, and [NewRequestSink], a [metrics.RequestSink] for
// towerhttp.WithRequestMetrics and towergrpc's WithServerMetrics and
// WithClientMetrics; [NewTraceLayer] puts the waits of a request in its
// trace.
//
//	meter := provider.Meter("github.com/towergo/tower")
//	limited, err := towerotel.NewSink(meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
//	if err != nil {
//		return err
//	}
//	svc := limit.NewConcurrency(handler, 100, limit.WithMetrics(limited))
//
// The counters are there, at zero, from the first collection, so that
// rate() alerts have a series before the first request is shed. Sinks made
// from one meter share its instruments: give each layer of a stack a Sink
// of its own with a "layer" attribute, and one dashboard shows where
// requests wait, queue and are turned away. The Prometheus exporter turns
// dots into underscores and adds _total to counters and _seconds to
// histograms in seconds: tower.calls is tower_calls_total.
//
// A RequestSink's durations have these attributes, and [OutcomeKey]:
//
//	HTTP  http.request.method ("_OTHER" if not known: WithKnownMethods),
//	      http.route (the ServeMux pattern's path, if any),
//	      http.response.status_code (if sent), url.scheme
//	RPC   rpc.system.name "grpc", rpc.method "pkg.Service/Method",
//	      rpc.response.status_code (the code's name, "OK")
//
// error.type is, for HTTP, the outcome of a request not served, else the
// status of a 5xx ("500"); for RPC, the status code's name if the
// convention counts it as an error (on a server UNKNOWN,
// DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS; on a
// client any but OK; on both a code gRPC does not define), else the
// outcome of an RPC shed, throttled or timed out.
//
// The package is a module of its own so that the core module keeps no
// dependencies.
package towerotel
