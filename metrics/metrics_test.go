package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

func TestKindString(t *testing.T) {
	tests := []struct {
		k    metrics.Kind
		want string
	}{
		{metrics.InFlight, "InFlight"},
		{metrics.Waiting, "Waiting"},
		{metrics.Queued, "Queued"},
		{metrics.Shed, "Shed"},
		{metrics.TimedOut, "TimedOut"},
		{metrics.Retried, "Retried"},
		{metrics.Hedged, "Hedged"},
		{metrics.Excluded, "Excluded"},
		{metrics.Limit, "Limit"},
		{metrics.Open, "Open"},
		{metrics.Tripped, "Tripped"},
		{metrics.Ejected, "Ejected"},
		{metrics.Throttled, "Throttled"},
		{0, "Kind(0)"},
		{metrics.Kind(metrics.NumKinds), fmt.Sprintf("Kind(%d)", metrics.NumKinds)},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.k.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// An Outcome's name is its metric label; a value that is not one of the
// constants, 0 or NumOutcomes and above, is named by its number.
func TestOutcomeString(t *testing.T) {
	for o, want := range map[metrics.Outcome]string{
		metrics.OutcomeServed:                "served",
		metrics.OutcomeError:                 "error",
		metrics.OutcomeShed:                  "shed",
		metrics.OutcomeThrottled:             "throttled",
		metrics.OutcomeTimedOut:              "timed_out",
		metrics.OutcomeCanceled:              "canceled",
		0:                                    "Outcome(0)",
		metrics.Outcome(metrics.NumOutcomes): fmt.Sprintf("Outcome(%d)", metrics.NumOutcomes),
	} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String(): got %q, want %q", uint8(o), got, want)
		}
	}
}

func TestKindUpDown(t *testing.T) {
	var got []metrics.Kind
	for k := range metrics.Kind(metrics.NumKinds + 1) {
		if k.UpDown() {
			got = append(got, k)
		}
	}
	if s, want := fmt.Sprint(got), "[InFlight Waiting Queued Excluded Limit Open Ejected]"; s != want {
		t.Errorf("got up-down kinds %s, want %s", s, want)
	}
}

func TestCounts(t *testing.T) {
	var c metrics.Counts
	if got, want := c.Snapshot().String(), "{}"; got != want {
		t.Errorf("zero Counts: got %q, want %q", got, want)
	}
	for k := range metrics.Kind(metrics.NumKinds + 1) { // 0 and NumKinds are ignored
		c.Add(k, int64(k)*10)
	}
	c.Add(metrics.Waiting, -5)
	for _, d := range []time.Duration{30 * ms, 100 * ms, 20 * ms} {
		c.Observe(d, metrics.OutcomeServed)
	}
	c.Observe(time.Microsecond, metrics.OutcomeShed) // counted, its latency not kept
	c.Observe(time.Second, metrics.OutcomeTimedOut)
	c.ObserveRequest(metrics.Request{Outcome: metrics.OutcomeShed, Latency: time.Microsecond})
	c.Observe(time.Hour, 0)                                    // ignored
	c.Observe(time.Hour, metrics.Outcome(metrics.NumOutcomes)) // ignored
	want := metrics.Snapshot{
		InFlight: 10, Waiting: 15, Queued: 30, Shed: 40, TimedOut: 50, Retried: 60, Hedged: 70, Excluded: 80, Limit: 90,
		Open: 100, Tripped: 110, Ejected: 120, Throttled: 130,
		Calls:   byOutcome{metrics.OutcomeServed: 3, metrics.OutcomeShed: 2, metrics.OutcomeTimedOut: 1},
		Latency: 150 * ms, MaxLatency: 100 * ms,
	}
	if got := c.Snapshot(); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, want := c.Get(metrics.Queued), int64(30); got != want {
		t.Errorf("Get(Queued): got %d, want %d", got, want)
	}
	if got := c.Get(metrics.Kind(metrics.NumKinds)); got != 0 {
		t.Errorf("Get of an unknown kind: got %d, want 0", got)
	}
	if got := want.Served(); got != 3 {
		t.Errorf("Served: got %d, want 3", got)
	}
	const wantString = "InFlight=10 Waiting=15 Queued=30 Shed=40 TimedOut=50 Retried=60 Hedged=70 Excluded=80 Limit=90 Open=100 Tripped=110 Ejected=120 Throttled=130 " +
		"Calls[served]=3 Calls[shed]=2 Calls[timed_out]=1 Latency=150ms MaxLatency=100ms"
	if got := want.String(); got != wantString {
		t.Errorf("String: got %q, want %q", got, wantString)
	}
}

// byOutcome is the type of a Snapshot's Calls.
type byOutcome = [metrics.NumOutcomes]int64

// Adds and observations from many goroutines at once all count.
func TestCountsConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 1000 {
					c.Add(metrics.InFlight, 1)
					c.Add(metrics.Shed, 1)
					c.Add(metrics.InFlight, -1)
					c.Observe(time.Duration(g*1000+i)*time.Microsecond, metrics.OutcomeServed)
				}
			})
		}
		wg.Wait()
		// The latencies are 0µs to 7999µs, once each.
		want := metrics.Snapshot{Shed: 8000, Calls: byOutcome{metrics.OutcomeServed: 8000}, Latency: 7999 * 8000 / 2 * time.Microsecond, MaxLatency: 7999 * time.Microsecond}
		if got := c.Snapshot(); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

func TestCountsDoesNotAllocate(t *testing.T) {
	var c metrics.Counts
	var sink metrics.Sink = &c
	allocs := testing.AllocsPerRun(100, func() {
		sink.Add(metrics.InFlight, 1)
		sink.Observe(ms, metrics.OutcomeServed)
		sink.Observe(ms, metrics.OutcomeShed)
		c.ObserveRequest(metrics.Request{Protocol: metrics.HTTPServer, Method: "GET", Outcome: metrics.OutcomeServed, Latency: ms})
	})
	if allocs != 0 {
		t.Errorf("got %v allocations, want 0", allocs)
	}
}

// recorder is a Sink that keeps every measurement, in order.
type recorder struct {
	mu        sync.Mutex
	adds      []string
	latencies []string
}

func (r *recorder) Add(k metrics.Kind, delta int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds = append(r.adds, fmt.Sprintf("%v%+d", k, delta))
}

func (r *recorder) Observe(d time.Duration, o metrics.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latencies = append(r.latencies, fmt.Sprintf("%v:%v", d, o))
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.adds, r.latencies)
}

// InFlight counts permits from Ready's grant to the end of their call, or
// their release; each call's latency is measured from Call to its return,
// with its outcome, and never includes Ready's wait.
func TestLayerInFlightAndLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		rec := &recorder{}
		mock, h := towertest.NewMock[string, string]()
		svc := metrics.New[string, string](metrics.New[string, string](mock, rec), &c)
		want := func(what string, s metrics.Snapshot) {
			t.Helper()
			synctest.Wait()
			if got := c.Snapshot(); got != s {
				t.Errorf("%s: got %v, want %v", what, got, s)
			}
		}
		start := time.Now()
		h.Allow(0)
		ready := make(chan tower.Permit[string, string], 3)
		go func() {
			for range 3 {
				p, err := svc.Ready(t.Context())
				if err != nil {
					t.Errorf("Ready: got %v, want a permit", err)
				}
				ready <- p
			}
		}()
		time.Sleep(500 * ms)
		want("waiting in Ready", metrics.Snapshot{})
		h.Allow(3)
		p1, p2, p3 := <-ready, <-ready, <-ready
		want("three permits", metrics.Snapshot{InFlight: 3})
		p3.Release()
		want("one released", metrics.Snapshot{InFlight: 2})

		calls := make(chan error, 2)
		go func() { _, err := p1.Call(t.Context(), "a"); calls <- err }()
		go func() { _, err := p2.Call(t.Context(), "b"); calls <- err }()
		synctest.Wait()
		a, _ := h.TryNext()
		b, _ := h.TryNext()
		time.Sleep(100 * ms)
		a.Respond("A")
		<-calls
		want("one answered at 100ms", metrics.Snapshot{InFlight: 1, Calls: byOutcome{metrics.OutcomeServed: 1}, Latency: 100 * ms, MaxLatency: 100 * ms})
		time.Sleep(150 * ms)
		b.Fail(errors.New("boom"))
		<-calls
		failed := metrics.Snapshot{Calls: byOutcome{metrics.OutcomeServed: 1, metrics.OutcomeError: 1}, Latency: 100 * ms, MaxLatency: 100 * ms}
		want("one failed at 250ms", failed)
		if got := time.Since(start); got != 750*ms {
			t.Errorf("ended at %v, want 750ms", got)
		}

		h.FailReady(errors.New("broken"))
		if _, err := svc.Ready(t.Context()); err == nil {
			t.Fatal("Ready: got a permit, want the inner service's error")
		}
		want("inner Ready failed", failed)
		// The inner layer saw the same, in order.
		const wantRec = "[InFlight+1 InFlight+1 InFlight+1 InFlight-1 InFlight-1 InFlight-1] [100ms:served 250ms:error]"
		if got := rec.String(); got != wantRec {
			t.Errorf("inner layer's sink: got %s, want %s", got, wantRec)
		}
	})
}

// A call that panics is counted out, as an error.
func TestLayerPanickingCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		svc := metrics.NewLayer[string, string](&c).Wrap(tower.ServiceFunc[string, string](
			func(context.Context, string) (string, error) {
				time.Sleep(20 * ms)
				panic("boom")
			}))
		towertest.Panics(t, "boom", func() { tower.Call(t.Context(), svc, "a") })
		if got, want := c.Snapshot(), (metrics.Snapshot{Calls: byOutcome{metrics.OutcomeError: 1}}); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

func TestLayerDoesNotAllocate(t *testing.T) {
	var c metrics.Counts
	svc := metrics.New[int, int](echo, &c)
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tower.Call(ctx, svc, 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}

func TestNewPanics(t *testing.T) {
	tests := []struct {
		name, want string
		f          func()
	}{
		{"NilInner", "metrics.New: nil inner service", func() { metrics.New[int, int](nil, &metrics.Counts{}) }},
		{"NilSink", "metrics.New: nil sink", func() { metrics.New[int, int](echo, nil) }},
		{"LayerNilSink", "metrics.NewLayer: nil sink", func() { metrics.NewLayer[int, int](nil) }},
		{"LayerNilInner", "metrics.New: nil inner service", func() { metrics.NewLayer[int, int](&metrics.Counts{}).Wrap(nil) }},
		{"TypedNilInner", "metrics.New: nil inner service", func() { metrics.New[int, int]((*towertest.Mock[int, int])(nil), &metrics.Counts{}) }},
		{"TypedNilSink", "metrics.New: nil sink", func() { metrics.New[int, int](echo, (*metrics.Counts)(nil)) }},
		{"LayerTypedNilSink", "metrics.NewLayer: nil sink", func() { metrics.NewLayer[int, int]((*metrics.Counts)(nil)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

func TestConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] { return metrics.NewLayer[string, string](&metrics.Counts{}) },
		Request:  "hello",
		Response: "world",
	}.Run(t)
}
