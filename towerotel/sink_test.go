package towerotel_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towerotel"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

// newReader returns a meter whose measurements reader collects.
func newReader() (metric.Meter, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return provider.Meter("test"), reader
}

func mustSink(t testing.TB, meter metric.Meter, opts ...towerotel.Option) *towerotel.Sink {
	t.Helper()
	s, err := towerotel.NewSink(meter, opts...)
	if err != nil {
		t.Fatalf("NewSink: got error %v, want none", err)
	}
	return s
}

// collect returns what reader exports, one line per data point, sorted:
// "name{attrs} value", with a histogram as "name{attrs} count=N sum=S
// buckets=[...]" (sum in seconds, to 4 significant digits).
func collect(t *testing.T, reader *sdkmetric.ManualReader) string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s %d", m.Name, attrs(p.Attributes), p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s count=%d sum=%.4g buckets=%v", m.Name, attrs(p.Attributes), p.Count, p.Sum, p.BucketCounts))
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// nonZero returns the lines of a collect that do not end in a value of 0:
// the counters a test is about, without the ones every Sink reports at
// zero.
func nonZero(lines string) string {
	var kept []string
	for l := range strings.Lines(lines) {
		if l = strings.TrimSuffix(l, "\n"); !strings.HasSuffix(l, " 0") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

func attrs(s attribute.Set) string {
	if s.Len() == 0 {
		return ""
	}
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, fmt.Sprintf("%s=%s", a.Key, a.Value.String()))
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// Each Kind goes to its instrument, of the right kind, unit and
// temporality; calls are counted by outcome; latencies go to the
// histogram in seconds, with the default buckets, under their outcome;
// unknown kinds and outcomes are ignored.
func TestInstruments(t *testing.T) {
	meter, reader := newReader()
	s := mustSink(t, meter)
	for k := range metrics.Kind(metrics.NumKinds + 1) {
		s.Add(k, 1)
	}
	s.Add(metrics.InFlight, 1)
	s.Add(metrics.Waiting, -1)
	s.Observe(3*ms, metrics.OutcomeServed)
	s.Observe(200*ms, metrics.OutcomeServed)
	s.Observe(1*ms, metrics.OutcomeShed)
	s.Observe(1*ms, 0)
	s.Observe(1*ms, metrics.Outcome(metrics.NumOutcomes))

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	units := map[string]string{"tower.excluded": "{address}", "tower.breakers.open": "{breaker}", "tower.breakers.tripped": "{trip}", "tower.ejected": "{endpoint}"}
	upDown := func(name, desc string, v int64) metricdata.Metrics {
		unit := units[name]
		if unit == "" {
			unit = "{request}"
		}
		return metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality, IsMonotonic: false,
			DataPoints: []metricdata.DataPoint[int64]{{Value: v}},
		}}
	}
	counter := func(name, desc string) metricdata.Metrics {
		unit := units[name]
		if unit == "" {
			unit = "{request}"
		}
		return metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{{Value: 1}},
		}}
	}
	outcome := func(o string) attribute.Set { return attribute.NewSet(towerotel.OutcomeKey.String(o)) }
	var calls []metricdata.DataPoint[int64]
	for o := metrics.Outcome(1); int(o) < metrics.NumOutcomes; o++ {
		n := map[metrics.Outcome]int64{metrics.OutcomeServed: 2, metrics.OutcomeShed: 1}[o]
		calls = append(calls, metricdata.DataPoint[int64]{Attributes: outcome(o.String()), Value: n})
	}
	latency := func(o string, count uint64, sum, min, max float64, buckets ...uint64) metricdata.HistogramDataPoint[float64] {
		return metricdata.HistogramDataPoint[float64]{
			Attributes: outcome(o), Count: count, Sum: sum,
			Bounds: towerotel.DefaultLatencyBuckets(), BucketCounts: buckets,
			Min: metricdata.NewExtrema(min), Max: metricdata.NewExtrema(max),
		}
	}
	want := metricdata.ScopeMetrics{
		Scope: rm.ScopeMetrics[0].Scope,
		Metrics: []metricdata.Metrics{
			upDown("tower.inflight", "Requests from the grant of their reservation to the end of their call.", 2),
			upDown("tower.waiting", "Callers waiting in Ready for capacity.", 0),
			upDown("tower.queued", "Requests queued in a Buffer or in its worker's hand.", 1),
			counter("tower.shed", "Requests a LoadShed turned away."),
			counter("tower.timed_out", "Calls a Timeout ended with ErrElapsed."),
			counter("tower.retried", "Retries a Retry sent."),
			counter("tower.hedged", "Hedges a Hedge sent."),
			upDown("tower.excluded", "Addresses a discovery found beyond its cap and left out of its set, as of its last lookup.", 1),
			upDown("tower.limit", "The concurrency limit an adaptive limiter holds.", 1),
			upDown("tower.breakers.open", "Circuit breakers open or half-open.", 1),
			counter("tower.breakers.tripped", "Times a circuit breaker opened."),
			upDown("tower.ejected", "Endpoints a balancer's outlier detection holds out of its set.", 1),
			counter("tower.throttled", "Requests a client-side adaptive throttle failed without sending them."),
			{
				Name: "tower.calls", Description: "Calls the metrics layer observed, by outcome.", Unit: "{call}",
				Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: calls},
			},
			{
				Name:        "tower.latency",
				Description: "The latency of calls, from Call to its return, as the metrics layer measures it.",
				Unit:        "s",
				Data: metricdata.Histogram[float64]{
					Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{
						latency("served", 2, 0.203, 0.003, 0.2, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0),
						latency("shed", 1, 0.001, 0.001, 0.001, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
					},
				},
			},
		},
	}
	if len(rm.ScopeMetrics) != 1 {
		t.Fatalf("got %d scopes, want 1", len(rm.ScopeMetrics))
	}
	metricdatatest.AssertEqual(t, want, rm.ScopeMetrics[0], metricdatatest.IgnoreTimestamp())
}

// Every counter of a Sink is there at zero from the first collection,
// before anything is added or observed; the latency histogram has no
// series until a latency is recorded.
func TestSinkZeroFromConstruction(t *testing.T) {
	meter, reader := newReader()
	mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
	want := strings.Join([]string{
		"tower.breakers.open{layer=limit} 0",
		"tower.breakers.tripped{layer=limit} 0",
		"tower.calls{layer=limit,tower.outcome=canceled} 0",
		"tower.calls{layer=limit,tower.outcome=error} 0",
		"tower.calls{layer=limit,tower.outcome=served} 0",
		"tower.calls{layer=limit,tower.outcome=shed} 0",
		"tower.calls{layer=limit,tower.outcome=throttled} 0",
		"tower.calls{layer=limit,tower.outcome=timed_out} 0",
		"tower.ejected{layer=limit} 0",
		"tower.excluded{layer=limit} 0",
		"tower.hedged{layer=limit} 0",
		"tower.inflight{layer=limit} 0",
		"tower.limit{layer=limit} 0",
		"tower.queued{layer=limit} 0",
		"tower.retried{layer=limit} 0",
		"tower.shed{layer=limit} 0",
		"tower.throttled{layer=limit} 0",
		"tower.timed_out{layer=limit} 0",
		"tower.waiting{layer=limit} 0",
	}, "\n")
	if got := collect(t, reader); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Sinks made from one meter share its instruments, each with its own
// attributes; WithLatencyBuckets sets the histogram's buckets.
func TestAttributesAndBuckets(t *testing.T) {
	meter, reader := newReader()
	limitSink := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
	shedSink := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "loadshed"), attribute.Int("stack", 1)))
	limitSink.Add(metrics.InFlight, 1)
	shedSink.Add(metrics.Shed, 1)
	shedSink.Add(metrics.Shed, 1)

	meter2, reader2 := newReader()
	s := mustSink(t, meter2, towerotel.WithLatencyBuckets(0.1, 1))
	s.Observe(50*ms, metrics.OutcomeServed)
	s.Observe(500*ms, metrics.OutcomeServed)
	s.Observe(5*time.Second, metrics.OutcomeServed)

	tests := []struct {
		name   string
		reader *sdkmetric.ManualReader
		want   string
	}{
		{"Attributes", reader, "tower.inflight{layer=limit} 1\ntower.shed{layer=loadshed,stack=1} 2"},
		{"Buckets", reader2, "tower.calls{tower.outcome=served} 3\ntower.latency{tower.outcome=served} count=3 sum=5.55 buckets=[1 1 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nonZero(collect(t, tt.reader)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A ConcurrencyLimit of 1 with three callers, 100ms per call, behind the
// metrics layer, each reporting to a Sink of its own: the exported values
// at each step.
func TestStackExports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		meter, reader := newReader()
		stackSink := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
		lim := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
		handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			time.Sleep(100 * ms)
			return req, nil
		})
		svc := stack.New[string, string]().
			Layer(metrics.NewLayer[string, string](stackSink)).
			Layer(limit.NewConcurrencyLayer[string, string](1, limit.WithMetrics(lim))).
			Service(handler)
		start := time.Now()
		var wg sync.WaitGroup
		for _, req := range []string{"a", "b", "c"} {
			wg.Go(func() { tower.Call(t.Context(), svc, req) })
			synctest.Wait()
		}
		at := func(d time.Duration, want ...string) {
			t.Helper()
			time.Sleep(d - time.Since(start))
			synctest.Wait()
			if got, w := nonZero(collect(t, reader)), strings.Join(want, "\n"); got != w {
				t.Errorf("at %v: got\n%s\nwant\n%s", d, got, w)
			}
		}
		// The counters at zero, every other one, are left out.
		at(50*ms,
			"tower.inflight{layer=limit} 1",
			"tower.inflight{layer=stack} 1",
			"tower.waiting{layer=limit} 2")
		at(150*ms,
			"tower.calls{layer=stack,tower.outcome=served} 1",
			"tower.inflight{layer=limit} 1",
			"tower.inflight{layer=stack} 1", // the third caller waits in the limit's Ready, under the metrics layer's
			"tower.latency{layer=stack,tower.outcome=served} count=1 sum=0.1 buckets=[0 0 0 0 0 1 0 0 0 0 0 0 0 0 0]",
			"tower.waiting{layer=limit} 1")
		wg.Wait()
		at(300*ms,
			"tower.calls{layer=stack,tower.outcome=served} 3",
			"tower.latency{layer=stack,tower.outcome=served} count=3 sum=0.3 buckets=[0 0 0 0 0 3 0 0 0 0 0 0 0 0 0]")
	})
}

// Recording allocates nothing: the attributes are fixed when the Sink is
// made.
func TestDoesNotAllocate(t *testing.T) {
	meter, _ := newReader()
	s := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
	tests := []struct {
		name string
		f    func()
	}{
		{"AddUpDown", func() { s.Add(metrics.InFlight, 1) }},
		{"AddCounter", func() { s.Add(metrics.Shed, 1) }},
		{"Observe", func() { s.Observe(3*ms, metrics.OutcomeServed) }},
		{"ObserveShed", func() { s.Observe(3*ms, metrics.OutcomeShed) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if allocs := testing.AllocsPerRun(100, tt.f); allocs != 0 {
				t.Errorf("got %v allocations, want 0", allocs)
			}
		})
	}
}

func TestNewSinkBadInput(t *testing.T) {
	meter := noop.NewMeterProvider().Meter("x")
	tests := []struct {
		name string
		opts []towerotel.Option
		want string
	}{
		{"nil option", []towerotel.Option{nil}, "towerotel.NewSink: option 0 is nil"},
		{"WithKnownMethods", []towerotel.Option{towerotel.WithKnownMethods("GET")}, "towerotel.NewSink: WithKnownMethods applies to a RequestSink only"},
		{"WithProtocols", []towerotel.Option{towerotel.WithProtocols(metrics.HTTPServer)}, "towerotel.NewSink: WithProtocols applies to a RequestSink only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := towerotel.NewSink(meter, tt.opts...); err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
	towertest.Panics(t, "towerotel.NewSink: nil meter", func() { towerotel.NewSink(nil) })
	towertest.Panics(t, "towerotel.NewSink: nil meter", func() { towerotel.NewSink((*typedNilMeter)(nil)) })
}

// Two Sinks of one meter report their own counts under their own
// attributes; a closed Sink's counts are no longer reported.
func TestSinksReportTheirOwnCounts(t *testing.T) {
	meter, reader := newReader()
	a := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "a")))
	b := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "b")))
	a.Add(metrics.InFlight, 2)
	b.Add(metrics.Shed, 3)
	want := "tower.inflight{layer=a} 2\ntower.shed{layer=b} 3"
	if got := nonZero(collect(t, reader)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got, want := collect(t, reader), "tower.inflight{layer=a} 2"; !strings.Contains(got, want) || strings.Contains(got, "layer=b") {
		t.Errorf("after Close, got:\n%s\nwant %q and no layer=b", got, want)
	}
}

// typedNilMeter is a metric.Meter with a pointer receiver, for a typed nil.
type typedNilMeter struct{ noop.Meter }
