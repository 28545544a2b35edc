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
// temporality; latencies go to the histogram in seconds, with the default
// buckets; unknown kinds are ignored.
func TestInstruments(t *testing.T) {
	meter, reader := newReader()
	s := mustSink(t, meter)
	for k := range metrics.Kind(metrics.NumKinds + 1) {
		s.Add(k, 1)
	}
	s.Add(metrics.InFlight, 1)
	s.Add(metrics.Waiting, -1)
	s.Observe(3 * ms)
	s.Observe(200 * ms)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	upDown := func(name, desc string, v int64) metricdata.Metrics {
		unit := "{request}"
		if name == "tower.excluded" {
			unit = "{address}"
		}
		return metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality, IsMonotonic: false,
			DataPoints: []metricdata.DataPoint[int64]{{Value: v}},
		}}
	}
	counter := func(name, desc string) metricdata.Metrics {
		return metricdata.Metrics{Name: name, Description: desc, Unit: "{request}", Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{{Value: 1}},
		}}
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
			{
				Name:        "tower.latency",
				Description: "The latency of calls, from Call to its return, as the metrics layer measures it.",
				Unit:        "s",
				Data: metricdata.Histogram[float64]{
					Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{{
						Count:        2,
						Sum:          0.203,
						Bounds:       towerotel.DefaultLatencyBuckets,
						BucketCounts: []uint64{1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
						Min:          metricdata.NewExtrema(0.003),
						Max:          metricdata.NewExtrema(0.2),
					}},
				},
			},
		},
	}
	if len(rm.ScopeMetrics) != 1 {
		t.Fatalf("got %d scopes, want 1", len(rm.ScopeMetrics))
	}
	metricdatatest.AssertEqual(t, want, rm.ScopeMetrics[0], metricdatatest.IgnoreTimestamp())
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
	s.Observe(50 * ms)
	s.Observe(500 * ms)
	s.Observe(5 * time.Second)

	tests := []struct {
		name   string
		reader *sdkmetric.ManualReader
		want   string
	}{
		{"Attributes", reader, "tower.inflight{layer=limit} 1\ntower.shed{layer=loadshed,stack=1} 2"},
		{"Buckets", reader2, "tower.latency count=3 sum=5.55 buckets=[1 1 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := collect(t, tt.reader); got != tt.want {
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
		stack := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
		lim := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
		handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			time.Sleep(100 * ms)
			return req, nil
		})
		svc := tower.NewBuilder[string, string]().
			Layer(metrics.NewLayer[string, string](stack)).
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
			if got, w := collect(t, reader), strings.Join(want, "\n"); got != w {
				t.Errorf("at %v: got\n%s\nwant\n%s", d, got, w)
			}
		}
		at(50*ms,
			"tower.inflight{layer=limit} 1",
			"tower.inflight{layer=stack} 1",
			"tower.waiting{layer=limit} 2")
		at(150*ms,
			"tower.inflight{layer=limit} 1",
			"tower.inflight{layer=stack} 1", // the third caller waits in the limit's Ready, under the metrics layer's
			"tower.latency{layer=stack} count=1 sum=0.1 buckets=[0 0 0 0 0 1 0 0 0 0 0 0 0 0 0]",
			"tower.waiting{layer=limit} 1")
		wg.Wait()
		at(300*ms,
			"tower.inflight{layer=limit} 0",
			"tower.inflight{layer=stack} 0",
			"tower.latency{layer=stack} count=3 sum=0.3 buckets=[0 0 0 0 0 3 0 0 0 0 0 0 0 0 0]",
			"tower.waiting{layer=limit} 0")
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
		{"Observe", func() { s.Observe(3 * ms) }},
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
	if _, err := towerotel.NewSink(noop.NewMeterProvider().Meter("x"), nil); err == nil || err.Error() != "towerotel.NewSink: option 0 is nil" {
		t.Errorf("nil option: got error %v, want %q", err, "towerotel.NewSink: option 0 is nil")
	}
	towertest.Panics(t, "towerotel.NewSink: nil meter", func() { towerotel.NewSink(nil) })
	towertest.Panics(t, "towerotel.NewSink: nil meter", func() { towerotel.NewSink((*typedNilMeter)(nil)) })
}

// Two Sinks of one meter report their own counts under their own
// attributes; a kind never added to is not reported; a closed Sink's
// counts are no longer reported.
func TestSinksReportTheirOwnCounts(t *testing.T) {
	meter, reader := newReader()
	a := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "a")))
	b := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "b")))
	a.Add(metrics.InFlight, 2)
	a.Add(metrics.InFlight, -2) // used, back to 0: still reported
	b.Add(metrics.Shed, 3)
	want := "tower.inflight{layer=a} 0\ntower.shed{layer=b} 3"
	if got := collect(t, reader); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got, want := collect(t, reader), "tower.inflight{layer=a} 0"; !strings.HasPrefix(got, want) || strings.Contains(got, "layer=b") {
		t.Errorf("after Close, got:\n%s\nwant no layer=b", got)
	}
}

// typedNilMeter is a metric.Meter with a pointer receiver, for a typed nil.
type typedNilMeter struct{ noop.Meter }
