package towerotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// The spans a Tracer records, each a child of the span in the context of
// the request it is about.
const (
	ReadySpanName = "tower.ready" // a wait in Ready (a [metrics.ReadyWait])
	QueueSpanName = "tower.queue" // a request's time in a Buffer's queue (a [metrics.QueueWait])
	// RetrySpanName is a retry, from the policy's decision to the retry's
	// answer: its backoff, Ready and Call, whose spans are its children.
	RetrySpanName = "tower.retry"
	// HedgeSpanName is a hedge, from the end of its delay to its answer or
	// its cancellation: its Ready and Call, whose spans are its children.
	HedgeSpanName = "tower.hedge"
)

// The attributes of the spans of retries and hedges.
const (
	AttemptKey = attribute.Key("tower.attempt")       // the attempt's number, [metrics.Attempt]'s N
	BackoffKey = attribute.Key("tower.retry.backoff") // a retry's backoff, in seconds
	CauseKey   = attribute.Key("tower.retry.cause")   // the error of the attempt before a retry, if any
	DelayKey   = attribute.Key("tower.hedge.delay")   // how long after the original a hedge was sent, in seconds
)

// Tracer is a [metrics.Tracer] that records OpenTelemetry spans: each wait
// as a span of [ReadySpanName] or [QueueSpanName], with the times the
// middleware measured, and each attempt as a span of [RetrySpanName] or
// [HedgeSpanName], under which the attempt runs. A span that ended with an
// error has it recorded, and the status Error.
//
// [NewTraceLayer] puts a Tracer in the context of each request it traces;
// [metrics.WithTracer] puts one in a context by hand. A Tracer is safe for
// concurrent use. Its zero value is not usable; call [NewTracer].
type Tracer struct {
	tracer trace.Tracer
	attrs  []attribute.KeyValue
}

var _ metrics.Tracer = (*Tracer)(nil)

// A TraceOption configures a Tracer, or a trace layer.
type TraceOption func(*traceOptions)

type traceOptions struct {
	attrs []attribute.KeyValue
}

// WithSpanAttributes puts attrs on every span the Tracer records, such as
// the stack or the client they come from: attribute.String("tower.stack",
// "users-db"). By default there are none.
func WithSpanAttributes(attrs ...attribute.KeyValue) TraceOption {
	return func(o *traceOptions) { o.attrs = append(o.attrs, attrs...) }
}

// NewTracer returns a Tracer that records its spans with tracer. It panics
// if tracer is nil (or holds a nil pointer), or if an option is nil.
func NewTracer(tracer trace.Tracer, opts ...TraceOption) *Tracer {
	return newTracer("towerotel.NewTracer", tracer, opts)
}

func newTracer(fn string, tracer trace.Tracer, opts []TraceOption) *Tracer {
	if guard.IsNil(tracer) {
		panic(fn + ": nil tracer")
	}
	var o traceOptions
	if err := onto(fn, &o, opts); err != nil {
		panic(err.Error())
	}
	return &Tracer{tracer: tracer, attrs: o.attrs}
}

// Waited records w as a span of [ReadySpanName] or [QueueSpanName] (or
// "tower.wait", for a kind it does not know), a child of ctx's span, from
// w.Start for w.Duration.
func (t *Tracer) Waited(ctx context.Context, w metrics.Wait) {
	name := "tower.wait"
	switch w.Kind {
	case metrics.ReadyWait:
		name = ReadySpanName
	case metrics.QueueWait:
		name = QueueSpanName
	}
	_, span := t.tracer.Start(ctx, name, trace.WithTimestamp(w.Start), trace.WithAttributes(t.attrs...))
	failed(span, w.Err)
	span.End(trace.WithTimestamp(w.Start.Add(w.Duration)))
}

// StartAttempt starts a span of [RetrySpanName] or [HedgeSpanName] (or
// "tower.attempt", for a kind it does not know), a child of ctx's span,
// with [AttemptKey], [BackoffKey] or [DelayKey], and [CauseKey], and
// returns ctx with that span in it.
func (t *Tracer) StartAttempt(ctx context.Context, a metrics.Attempt) context.Context {
	attrs := append(make([]attribute.KeyValue, 0, len(t.attrs)+3), t.attrs...)
	attrs = append(attrs, AttemptKey.Int(a.N))
	name := "tower.attempt"
	switch a.Kind {
	case metrics.RetryAttempt:
		name = RetrySpanName
		attrs = append(attrs, BackoffKey.Float64(a.Delay.Seconds()))
		if a.Cause != nil {
			attrs = append(attrs, CauseKey.String(a.Cause.Error()))
		}
	case metrics.HedgeAttempt:
		name = HedgeSpanName
		attrs = append(attrs, DelayKey.Float64(a.Delay.Seconds()))
	}
	ctx, _ = t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	return ctx
}

// EndAttempt ends the span of the attempt, which ctx carries, recording
// err if it is not nil.
func (t *Tracer) EndAttempt(ctx context.Context, err error) {
	span := trace.SpanFromContext(ctx)
	failed(span, err)
	span.End()
}

// failed records err, if not nil, on span.
func failed(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// NewTraceLayer returns a Layer that traces the requests whose context
// carries a recording (sampled) span: it records each one's wait in Ready
// as a span of [ReadySpanName], and puts a [Tracer] in the context of its
// Call, so that the Buffers, Retries and Hedges below record their
// queueing, retries and hedges. Put it outermost, where the caller's span
// is, to see the whole wait for capacity. A request without a recording
// span reads no clock and allocates nothing. NewTraceLayer panics if
// tracer is nil (or holds a nil pointer), or if an option is nil.
func NewTraceLayer[Req, Res any](tracer trace.Tracer, opts ...TraceOption) tower.Layer[Req, Res] {
	t := newTracer("towerotel.NewTraceLayer", tracer, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		if guard.IsNil(inner) {
			panic("towerotel.NewTraceLayer: Wrap of a nil inner service")
		}
		return &traced[Req, Res]{inner: inner, t: t}
	})
}

// traced is the service of a trace layer.
type traced[Req, Res any] struct {
	inner tower.Service[Req, Res]
	t     *Tracer
	wraps tower.WrapPool[Req, Res]
}

// Ready waits for the inner service and wraps its permit, so that Call
// can hand the Tracer down, and records the wait if ctx's span records.
func (s *traced[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		p, err := s.inner.Ready(ctx)
		if err != nil {
			return p, err
		}
		return s.wraps.Wrap((*tracedWrapper[Req, Res])(s), p), nil
	}
	start := time.Now()
	p, err := s.inner.Ready(ctx)
	w := metrics.Wait{Kind: metrics.ReadyWait, Start: start, Duration: time.Since(start), Err: err}
	guard.Undo(func() { s.t.Waited(ctx, w) }, func() {
		if err == nil {
			p.Release() // recording panicked: the permit goes back first
		}
	})
	if err != nil {
		return p, err
	}
	return s.wraps.Wrap((*tracedWrapper[Req, Res])(s), p), nil
}

// tracedWrapper is the trace layer's tower.Wrapper, kept off its method
// set.
type tracedWrapper[Req, Res any] traced[Req, Res]

func (w *tracedWrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	if trace.SpanFromContext(ctx).IsRecording() {
		ctx = metrics.WithTracer(ctx, w.t)
	}
	return inner.Call(ctx, req)
}

func (w *tracedWrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }
