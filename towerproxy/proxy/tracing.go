package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towerotel"
)

// Tracing turns on OpenTelemetry tracing: each request gets a server
// span, a child of the client's if its traceparent header names one
// (W3C Trace Context), and each attempt sent to a backend a client span,
// whose context goes to the backend in traceparent; the waits for a
// permit of a limit and the retries are spans of their own (package
// towerotel's trace layer). Tracing is off unless the configuration has
// this section; it is set up when the proxy starts, and a reload keeps
// the tracing in force.
type Tracing struct {
	// Exporter is where the spans go: "otlp" (the default: OTLP over
	// HTTP, to Endpoint) or "stdout" (JSON, for a look by hand).
	Exporter string `yaml:"exporter"`
	// Endpoint is the URL of the OTLP collector's traces,
	// "http://127.0.0.1:4318/v1/traces" by default.
	Endpoint string `yaml:"endpoint"`
	// Sample is the share of the traces started here that are recorded,
	// 100% by default. A request whose traceparent says its trace is
	// sampled is recorded, and one that says it is not is not, whatever
	// Sample says.
	Sample *Percent `yaml:"sample"`
	// ServiceName is the service.name of the spans, "towerproxy" by
	// default.
	ServiceName string `yaml:"service_name"`
}

func (t *Tracing) defaults() {
	if t.Exporter == "" {
		t.Exporter = "otlp"
	}
	if t.Endpoint == "" && t.Exporter == "otlp" {
		t.Endpoint = "http://127.0.0.1:4318/v1/traces"
	}
	if t.Sample == nil {
		all := Percent(1)
		t.Sample = &all
	}
	if t.ServiceName == "" {
		t.ServiceName = "towerproxy"
	}
}

func (t *Tracing) check(l locator) error {
	at := []any{"tracing"}
	switch t.Exporter {
	case "otlp":
		u, err := url.Parse(t.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return l.errorAt("tracing.endpoint %q is not a URL (write it as http://collector:4318/v1/traces)", append(at, "endpoint"), t.Endpoint)
		}
	case "stdout":
		if t.Endpoint != "" {
			return l.errorAt("tracing.endpoint is for the otlp exporter, not stdout", append(at, "endpoint"))
		}
	default:
		return l.errorAt("tracing.exporter %q is neither otlp nor stdout", append(at, "exporter"), t.Exporter)
	}
	return nil
}

// tracing is the tracing in force: a tracer, and the propagation of W3C
// Trace Context.
type tracing struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	shutdown func(context.Context) error
}

// tracerName is the name of the tracer, the instrumentation scope of the
// spans.
const tracerName = "github.com/towergo/tower/towerproxy"

// newTracing returns the tracing of cfg, or of tp if it is not nil
// (WithTracerProvider), or nil if neither asks for any.
func newTracing(cfg *Tracing, tp trace.TracerProvider) (*tracing, error) {
	t := &tracing{
		prop:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		shutdown: func(context.Context) error { return nil },
	}
	switch {
	case tp != nil:
	case cfg == nil:
		return nil, nil
	default:
		var exp sdktrace.SpanExporter
		var err error
		if cfg.Exporter == "stdout" {
			exp, err = stdouttrace.New(stdouttrace.WithWriter(os.Stdout))
		} else {
			exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cfg.Endpoint))
		}
		if err != nil {
			return nil, fmt.Errorf("tracing: %w", err)
		}
		sdk := sdktrace.NewTracerProvider(
			sdktrace.WithBatcher(exp),
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(float64(*cfg.Sample)))),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(cfg.ServiceName))),
		)
		tp, t.shutdown = sdk, sdk.Shutdown
	}
	t.tracer = tp.Tracer(tracerName)
	return t, nil
}

// layer is the trace layer of a server stack.
func (t *tracing) layer() tower.Layer[*http.Request, towerhttp.Response] {
	return towerotel.NewTraceLayer[*http.Request, towerhttp.Response](t.tracer)
}

// server starts the server span of r, under the trace its traceparent
// names, and returns its context and the function that ends it once the
// request's record is complete.
func (t *tracing) server(ctx context.Context, r *http.Request) (context.Context, func(*record, *http.Request)) {
	ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(r.Method),
		semconv.URLPath(r.URL.Path),
		semconv.ServerAddress(r.Host),
		semconv.ClientAddress(clientAddr(r)),
	))
	return ctx, func(rec *record, r *http.Request) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.route != "" {
			span.SetName(r.Method + " " + rec.route)
			span.SetAttributes(semconv.HTTPRoute(rec.route), attribute.String("towerproxy.upstream", rec.upstream))
		}
		if rec.status != 0 {
			span.SetAttributes(semconv.HTTPResponseStatusCode(rec.status))
		}
		if rec.attempts > 0 {
			span.SetAttributes(attribute.String("towerproxy.backend", rec.backend), attribute.Int("towerproxy.attempts", rec.attempts))
		}
		switch {
		case rec.shed != "":
			span.SetAttributes(attribute.String("towerproxy.shed", rec.shed))
			span.SetStatus(codes.Error, "shed by "+rec.shed)
		case rec.failure != "":
			span.SetStatus(codes.Error, rec.failure)
		case rec.status >= 500:
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}

// attempt starts the client span of an attempt of req to the backend at
// addr, a child of the span in ctx, and returns a copy of req that
// carries its context in traceparent (a copy, with a header of its own:
// a hedge may send req at the same time), and the function that ends
// the span with the attempt's result.
func (t *tracing) attempt(ctx context.Context, req *http.Request, addr string) (*http.Request, func(*http.Response, error)) {
	sctx, span := t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(req.Method),
		attribute.String("towerproxy.backend", addr),
	))
	out := new(http.Request)
	*out = *req
	out.Header = req.Header.Clone()
	if out.Header == nil {
		out.Header = http.Header{}
	}
	t.prop.Inject(sctx, propagation.HeaderCarrier(out.Header))
	return out, func(res *http.Response, err error) {
		switch {
		case err != nil:
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		case res != nil:
			span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
			if res.StatusCode >= 500 {
				span.SetStatus(codes.Error, "")
			}
		}
		span.End()
	}
}

// traceID returns the ID of the trace of rec's request, or "" if it is
// not traced.
func traceID(rec *record) string {
	sc := trace.SpanContextFromContext(rec.Context)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}
