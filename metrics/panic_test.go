package metrics_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// countInPanics is a Counts that panics on the first Add of InFlight +1
// once armed.
type countInPanics struct {
	metrics.Counts
	armed atomic.Bool
}

func (s *countInPanics) Add(k metrics.Kind, delta int64) {
	if k == metrics.InFlight && delta == 1 && s.armed.Swap(false) {
		panic("sink exploded")
	}
	s.Counts.Add(k, delta)
}

// A sink that panics as Ready counts the permit in: the panic goes on up
// to the caller, which never gets the permit, and the inner service's
// permit goes back first. Kept, it would be lost for good: an inner
// service of one permit would never be ready again.
func TestLayerPanickingSinkReleasesInnerPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(1)
		sink := &countInPanics{}
		sink.armed.Store(true)
		svc := metrics.New[string, string](mock, sink)
		towertest.Panics(t, "sink exploded", func() { svc.Ready(t.Context()) })
		h.ExpectOutstanding(t, 0)
		p, ok := towertest.ReadyNow(t, svc)
		if !ok {
			t.Fatal("ReadyNow after the panic: not ready, want the inner permit back")
		}
		towertest.CallThrough(t, p, h, "a", "A")
		if got, want := sink.Snapshot(), (metrics.Snapshot{Calls: byOutcome{metrics.OutcomeServed: 1}}); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

// releasePanics is a service whose permits' Release panics.
type releasePanics struct{}

func (releasePanics) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.NewPermit[string, string](releasePanics{}, 0), nil
}

func (releasePanics) CallReserved(_ context.Context, _ uint64, req string) (string, error) {
	return req, nil
}

func (releasePanics) ReleaseReserved(uint64) { panic("release exploded") }

// An inner permit whose Release panics is counted out all the same: the
// panic goes on up to the caller, and InFlight is back to 0.
func TestLayerPanickingReleaseCountsOut(t *testing.T) {
	var c metrics.Counts
	svc := metrics.New[string, string](releasePanics{}, &c)
	p := towertest.MustReady(t, svc)
	towertest.Panics(t, "release exploded", p.Release)
	if got := c.Snapshot(); got != (metrics.Snapshot{}) {
		t.Errorf("got %v, want {}", got)
	}
}
