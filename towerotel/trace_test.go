package towerotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towerotel"
	"github.com/towergo/tower/towertest"
)

// newTracer returns a tracer that samples every span, and the recorder of
// the spans it ends.
func newTracer() (trace.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return tp.Tracer("test"), rec
}

// spans describes the spans rec has ended, one line each, sorted by start
// and then by name: "name START..END parent=NAME attrs error=MESSAGE",
// with times from start, the parent's name ("-" for a root span), the
// attributes as key=value in order, and the status if it is Error.
func spans(rec *tracetest.SpanRecorder, start time.Time) []string {
	ended := rec.Ended()
	names := map[trace.SpanID]string{}
	for _, s := range ended {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	slices.SortStableFunc(ended, func(a, b sdktrace.ReadOnlySpan) int {
		if c := a.StartTime().Compare(b.StartTime()); c != 0 {
			return c
		}
		return strings.Compare(a.Name(), b.Name())
	})
	var lines []string
	for _, s := range ended {
		parent := "-"
		if s.Parent().IsValid() {
			parent = names[s.Parent().SpanID()]
		}
		line := fmt.Sprintf("%s %v..%v parent=%s", s.Name(), s.StartTime().Sub(start), s.EndTime().Sub(start), parent)
		for _, kv := range s.Attributes() {
			line += fmt.Sprintf(" %s=%s", kv.Key, kv.Value.String())
		}
		if s.Status().Code == codes.Error {
			line += " error=" + s.Status().Description
		}
		lines = append(lines, line)
	}
	return lines
}

// wantSpans fails t unless rec ended the spans want, as spans describes
// them.
func wantSpans(t *testing.T, rec *tracetest.SpanRecorder, start time.Time, want ...string) {
	t.Helper()
	if got := spans(rec, start); !slices.Equal(got, want) {
		t.Errorf("got spans\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// spanOf returns the ID of the span in ctx.
func spanOf(ctx context.Context) trace.SpanID {
	return trace.SpanFromContext(ctx).SpanContext().SpanID()
}

// A request that waits 30ms for a ConcurrencyLimit(1)'s permit has a
// tower.ready span of exactly 30ms, a child of its own span.
func TestTraceReadyWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracer, rec := newTracer()
		start := time.Now()
		m, h := towertest.NewMock[string, string]()
		lim := limit.NewConcurrency[string, string](m, 1)
		svc := towerotel.NewTraceLayer[string, string](tracer).Wrap(lim)
		held := towertest.MustReady(t, lim)
		ctx, span := tracer.Start(t.Context(), "request")
		call := towertest.GoRequest(ctx, svc, "hello")
		time.Sleep(30 * time.Millisecond)
		held.Release()
		r := h.ExpectSettled(t, "hello")
		if metrics.TracerFrom(r.Context()) == nil {
			t.Error("the Call below the trace layer has no Tracer in its context")
		}
		time.Sleep(5 * time.Millisecond)
		r.Respond("world")
		call.ExpectValue(t, "world")
		span.End()
		wantSpans(t, rec, start,
			"request 0s..35ms parent=-",
			"tower.ready 0s..30ms parent=request",
		)
	})
}

// Under a trace layer: a Retry over a Buffer over a ConcurrencyLimit(1)
// whose only permit is held until 30ms. The request queues in the Buffer
// for 30ms, fails at 35ms, and its retry, after a 10ms backoff, skips the
// queue and answers at 50ms: one tower.queue span, one tower.retry span,
// each a child of the request's span, and the retry's call a child of the
// retry's.
func TestTraceQueueAndRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracer, rec := newTracer()
		start := time.Now()
		m, h := towertest.NewMock[string, string]()
		lim := limit.NewConcurrency[string, string](m, 1)
		buf := buffer.NewLayer[string, string](8)
		defer buf.Close()
		backoff := retry.PolicyFunc[string, string](func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
			return 10 * time.Millisecond, a.Err != nil && a.N < 3
		})
		svc := stack.New[string, string]().
			Layer(towerotel.NewTraceLayer[string, string](tracer)).
			Layer(retry.NewLayer(backoff)).
			Layer(buf).
			Service(lim)
		held := towertest.MustReady(t, lim)
		ctx, span := tracer.Start(t.Context(), "request")
		call := towertest.GoRequest(ctx, svc, "hello")
		time.Sleep(30 * time.Millisecond)
		held.Release()
		first := h.ExpectSettled(t, "hello")
		time.Sleep(5 * time.Millisecond)
		first.Fail(errors.New("unavailable"))
		time.Sleep(10 * time.Millisecond)
		second := h.ExpectSettled(t, "hello")
		time.Sleep(5 * time.Millisecond)
		second.Respond("world")
		call.ExpectValue(t, "world")
		span.End()
		wantSpans(t, rec, start,
			"request 0s..50ms parent=-",
			"tower.queue 0s..30ms parent=request",
			"tower.ready 0s..0s parent=request",
			"tower.retry 35ms..50ms parent=request tower.attempt=2 tower.retry.backoff=0.01 tower.retry.cause=unavailable",
		)
		if got, want := spanOf(first.Context()), span.SpanContext().SpanID(); got != want {
			t.Errorf("the first attempt's call is under span %v, want the request's, %v", got, want)
		}
		retried := rec.Ended()[len(rec.Ended())-2] // ended just before the request's
		if got, want := spanOf(second.Context()), retried.SpanContext().SpanID(); retried.Name() != towerotel.RetrySpanName || got != want {
			t.Errorf("the retry's call is under span %v, want the retry's, %v (%s)", got, want, retried.Name())
		}
	})
}

// A hedge sent at 10ms that answers at 13ms is a tower.hedge span from
// 10ms to 13ms; the original, which it beat, has none.
func TestTraceHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracer, rec := newTracer()
		m, h := towertest.NewMock[string, string]()
		svc := stack.New[string, string]().
			Layer(towerotel.NewTraceLayer[string, string](tracer)).
			Layer(hedge.NewLayer[string, string](hedge.Idempotent[string]{}, 1, 0.5, time.Second)).
			Service(m)
		// One request of 10ms, untraced, in the first period: the hedge's
		// delay in the next.
		warm := towertest.GoRequest(t.Context(), svc, "warm-up")
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "warm-up").Respond("ok")
		warm.ExpectValue(t, "ok")
		time.Sleep(time.Second)
		start := time.Now()
		ctx, span := tracer.Start(t.Context(), "request")
		call := towertest.GoRequest(ctx, svc, "hello")
		orig := h.ExpectSettled(t, "hello")
		time.Sleep(10 * time.Millisecond)
		hedged := h.ExpectSettled(t, "hello")
		time.Sleep(3 * time.Millisecond)
		hedged.Respond("hedge")
		call.ExpectValue(t, "hedge")
		span.End()
		wantSpans(t, rec, start,
			"request 0s..13ms parent=-",
			"tower.ready 0s..0s parent=request",
			"tower.hedge 10ms..13ms parent=request tower.attempt=2 tower.hedge.delay=0.01",
		)
		if spanOf(orig.Context()) != span.SpanContext().SpanID() || spanOf(hedged.Context()) == span.SpanContext().SpanID() {
			t.Error("the original should be under the request's span, and the hedge under its own")
		}
	})
}

// A request whose wait ends with its context's error has that error on
// its span, with the status Error: here one that leaves a Buffer's queue
// at its deadline, 20ms.
func TestTraceWaitEndsWithError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracer, rec := newTracer()
		start := time.Now()
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		buf := buffer.NewLayer[string, string](8)
		defer buf.Close()
		svc := stack.New[string, string]().
			Layer(towerotel.NewTraceLayer[string, string](tracer, towerotel.WithSpanAttributes(attribute.String("tower.stack", "db")))).
			Layer(buf).
			Service(m)
		ctx, span := tracer.Start(t.Context(), "request")
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		call := towertest.GoRequest(ctx, svc, "hello")
		call.ExpectError(t, context.DeadlineExceeded)
		span.End()
		wantSpans(t, rec, start,
			"request 0s..20ms parent=-",
			"tower.queue 0s..20ms parent=request tower.stack=db error=context deadline exceeded",
			"tower.ready 0s..0s parent=request tower.stack=db",
		)
	})
}

// A request without a recording span records nothing, and its Call gets
// no Tracer: here one with no span at all, and one whose span is not
// sampled.
func TestTraceUnsampled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracer, rec := newTracer()
		never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("never")
		unsampled, span := never.Start(t.Context(), "request")
		defer span.End()
		m, h := towertest.NewMock[string, string]()
		svc := towerotel.NewTraceLayer[string, string](tracer).Wrap(m)
		for _, ctx := range []context.Context{t.Context(), unsampled} {
			call := towertest.GoRequest(ctx, svc, "hello")
			r := h.ExpectSettled(t, "hello")
			if metrics.TracerFrom(r.Context()) != nil {
				t.Error("the Call of a request that is not traced got a Tracer")
			}
			r.Respond("world")
			call.ExpectValue(t, "world")
		}
		if n := len(rec.Ended()); n != 0 {
			t.Errorf("recorded %d spans, want none", n)
		}
	})
}

// The trace layer keeps the readiness contract.
func TestTraceLayerConformance(t *testing.T) {
	tracer, _ := newTracer()
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] { return towerotel.NewTraceLayer[string, string](tracer) },
		Request:  "hello",
		Response: "world",
	}.Run(t)
}

func TestTraceBadInput(t *testing.T) {
	tracer, _ := newTracer()
	for _, tt := range []struct {
		name, want string
		f          func()
	}{
		{"NewTracer", "towerotel.NewTracer: nil tracer", func() { towerotel.NewTracer(nil) }},
		{"NewTraceLayer", "towerotel.NewTraceLayer: nil tracer", func() { towerotel.NewTraceLayer[string, string](nil) }},
		{"TypedNil", "towerotel.NewTracer: nil tracer", func() { towerotel.NewTracer((*ptrTracer)(nil)) }},
		{"Option", "towerotel.NewTraceLayer: option 1 is nil", func() {
			towerotel.NewTraceLayer[string, string](tracer, towerotel.WithSpanAttributes(), nil)
		}},
		{"Wrap", "towerotel.NewTraceLayer: Wrap of a nil inner service", func() {
			towerotel.NewTraceLayer[string, string](tracer).Wrap(nil)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// ptrTracer is a trace.Tracer that a test can give as a nil pointer.
type ptrTracer struct{ trace.Tracer }

// BenchmarkTraceLayer is the trace layer over echo, for requests that are
// not traced: no span in their context.
func BenchmarkTraceLayer(b *testing.B) {
	tracer, _ := newTracer()
	towertest.Bench(b, towerotel.NewTraceLayer[int, int](tracer).Wrap(echo), 1)
}

// BenchmarkTraceLayerSampled is the trace layer over echo for requests
// with a sampled span: a tower.ready span each, recorded by an SDK with
// no processor, and a context for the Call.
func BenchmarkTraceLayerSampled(b *testing.B) {
	tracer := sdktrace.NewTracerProvider().Tracer("bench")
	svc := towerotel.NewTraceLayer[int, int](tracer).Wrap(echo)
	ctx, span := tracer.Start(context.Background(), "request")
	defer span.End()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := tower.Call(ctx, svc, 1)
		if err != nil {
			b.Fatal(err)
		}
		n += res
	}
	sink += n
}

// panicTracer is a trace.Tracer whose Start panics.
type panicTracer struct{ trace.Tracer }

func (panicTracer) Start(context.Context, string, ...trace.SpanStartOption) (context.Context, trace.Span) {
	panic("tracer broke")
}

// A Tracer that panics while it records a wait in Ready: the panic goes up
// to the caller, and the permit Ready was granted is given back first.
func TestTraceReadyPanicReleasesPermit(t *testing.T) {
	tracer, _ := newTracer()
	m, _ := towertest.NewMock[string, string]()
	lim := limit.NewConcurrency[string, string](m, 1)
	svc := towerotel.NewTraceLayer[string, string](panicTracer{noop.NewTracerProvider().Tracer("")}).Wrap(lim)
	ctx, span := tracer.Start(t.Context(), "request")
	defer span.End()
	towertest.Panics(t, "tracer broke", func() { svc.Ready(ctx) })
	p, ok, err := tower.ReadyNow[string, string](lim)
	if !ok || err != nil {
		t.Fatalf("ReadyNow after the panic: got %v, %v; want the permit given back", ok, err)
	}
	p.Release()
}
