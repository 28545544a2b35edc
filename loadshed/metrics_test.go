package loadshed_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// LoadShed > ConcurrencyLimit(1) > 100ms per call: while a call is in
// flight every other request is shed, each counted once, when its permit
// is called. A shedding permit released unused turned nobody away.
func TestMetricsShed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			time.Sleep(100 * time.Millisecond)
			return req, nil
		})
		svc := loadshed.New[string, string](limit.NewConcurrency[string, string](handler, 1), loadshed.WithMetrics(&c))
		start := time.Now()
		shedAt := func(at time.Duration, want int64) {
			t.Helper()
			time.Sleep(at - time.Since(start))
			synctest.Wait()
			if got := c.Get(metrics.Shed); got != want {
				t.Errorf("at %v: got Shed %d, want %d", time.Since(start), got, want)
			}
		}
		a := towertest.GoRequest(t.Context(), svc, "a")
		b := towertest.GoRequest(t.Context(), svc, "b")
		cc := towertest.GoRequest(t.Context(), svc, "c")
		shedAt(0, 2)
		p := towertest.MustReady(t, svc)
		p.Release()
		shedAt(50*time.Millisecond, 2)

		shedAt(100*time.Millisecond, 2)
		d := towertest.GoRequest(t.Context(), svc, "d")
		e := towertest.GoRequest(t.Context(), svc, "e")
		shedAt(100*time.Millisecond, 3)
		for _, tt := range []struct {
			req string
			o   *towertest.Outcome[string]
			at  time.Duration
		}{{"b", b, 0}, {"c", cc, 0}, {"e", e, 100 * time.Millisecond}} {
			if !tt.o.Done() {
				t.Errorf("%s: still waiting, want %v at %v", tt.req, loadshed.ErrOverloaded, tt.at)
				continue
			}
			if _, err := tt.o.Wait(); err != loadshed.ErrOverloaded || tt.o.Since(start) != tt.at {
				t.Errorf("%s: got %v at %v, want %v at %v", tt.req, err, tt.o.Since(start), loadshed.ErrOverloaded, tt.at)
			}
		}
		for _, tt := range []struct {
			req string
			o   *towertest.Outcome[string]
		}{{"a", a}, {"d", d}} {
			if _, err := tt.o.Wait(); err != nil {
				t.Errorf("%s: got error %v, want none", tt.req, err)
			}
		}
		if got, want := fmt.Sprint(a.Since(start), d.Since(start)), "100ms 200ms"; got != want {
			t.Errorf("answered at %s, want %s", got, want)
		}
		if got, want := c.Snapshot(), (metrics.Snapshot{Shed: 3}); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

// The layer passes its options to every LoadShed it makes; with a sink,
// neither a request that goes through nor one that is shed allocates.
func TestMetricsLayerDoesNotAllocate(t *testing.T) {
	tests := []struct {
		name  string
		inner tower.Service[int, int]
		shed  int64
	}{
		{"Ready", echo, 0},
		{"Shedding", neverReady{}, 101}, // AllocsPerRun runs once more
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c metrics.Counts
			svc := loadshed.NewLayer[int, int](loadshed.WithMetrics(&c)).Wrap(tt.inner)
			ctx := context.Background()
			allocs := testing.AllocsPerRun(100, func() {
				p, _ := svc.Ready(ctx)
				p.Call(ctx, 1)
			})
			if allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
			if got := c.Get(metrics.Shed); got != tt.shed {
				t.Errorf("got Shed %d, want %d", got, tt.shed)
			}
		})
	}
}

func TestOptionPanics(t *testing.T) {
	tests := []struct {
		name, want string
		f          func()
	}{
		{"New", "loadshed.New: option 0 is nil", func() { loadshed.New[string, string](echoString, nil) }},
		{"NewLayer", "loadshed.NewLayer: option 1 is nil", func() { loadshed.NewLayer[string, string](loadshed.WithMetrics(nil), nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

var echoString = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })

// BenchmarkLoadShedSheddingMetrics is BenchmarkLoadShedShedding reporting
// to a metrics.Counts.
func BenchmarkLoadShedSheddingMetrics(b *testing.B) {
	benchShedding(b, loadshed.New[int, int](neverReady{}, loadshed.WithMetrics(new(metrics.Counts))))
}

// BenchmarkLoadShedMetrics is BenchmarkLoadShed with a sink, which a
// request that goes through does not touch.
func BenchmarkLoadShedMetrics(b *testing.B) {
	towertest.Bench(b, loadshed.New[int, int](echo, loadshed.WithMetrics(new(metrics.Counts))), 1)
}

// shedPanics is a sink whose Add of Shed panics.
type shedPanics struct{}

func (shedPanics) Add(k metrics.Kind, _ int64) {
	if k == metrics.Shed {
		panic("sink exploded")
	}
}
func (shedPanics) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as a request is shed: the panic goes on up to the
// caller, which held nothing of the inner service's, and the LoadShed
// serves as soon as the inner service is ready again.
func TestMetricsPanickingSink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		svc := loadshed.New[string, string](mock, loadshed.WithMetrics(shedPanics{}))
		towertest.Panics(t, "sink exploded", func() { tower.Call[string, string](t.Context(), svc, "a") })
		h.ExpectIdle(t, 0)
		h.Allow(1)
		towertest.CallThrough(t, towertest.MustReady(t, svc), h, "b", "B")
	})
}
