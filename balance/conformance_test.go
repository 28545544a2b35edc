package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})

// TestConformance runs towertest's ServiceSuite on balancers over echo
// endpoints. towertest.LayerSuite (a balancer over one mock, as a Layer)
// does not apply, by design: a ready endpoint holds a reservation while the
// balancer is idle, where the suite wants none outstanding after a
// release; and an endpoint whose Ready fails is dropped and reported, never
// returned to the caller, where the suite wants the inner error. The rest
// of that suite's contract is checked over mocks in this package's other
// tests (a request reaches the endpoint and its answer comes back, a
// context that ends while Ready waits, Close giving every reservation
// back). Endpoints with limited capacity are left out of the suite: a
// reservation released unused goes back to its endpoint, and the balancer
// sees it once the goroutine waiting for that endpoint has run, not at the
// instant of the release (TestLimitedEndpoints covers them).
func TestConformance(t *testing.T) {
	peak := func() endpoint { return load.NewPeakEwma[string, string](echo, 30*time.Millisecond, 10*time.Second) }
	pending := func() endpoint { return load.NewPendingRequests[string, string](echo) }
	for _, tt := range []struct {
		name            string
		svc             func() tower.Service[string, string]
		reservesNothing bool
	}{
		{"P2COnePeakEwma", func() tower.Service[string, string] { return balance.NewP2C(list(peak())) }, false},
		{"P2CThreePeakEwma", func() tower.Service[string, string] { return balance.NewP2C(list(peak(), peak(), peak())) }, false},
		{"P2CThreePending", func() tower.Service[string, string] {
			return balance.NewP2C(list(pending(), pending(), pending()), balance.WithRand(newRand(1)))
		}, false},
		{"P2CFailFast", func() tower.Service[string, string] { return balance.NewP2C(list(peak()), balance.WithFailFast()) }, false},
		{"RoundRobinThree", func() tower.Service[string, string] {
			return balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](pending(), pending(), pending()))
		}, false},
		{"P2COutlierDetection", func() tower.Service[string, string] {
			return balance.NewP2C(list(peak(), peak(), peak()), balance.WithOutlierDetection(isFailure))
		}, false},
		{"RoundRobinOutlierDetection", func() tower.Service[string, string] {
			return balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](pending(), pending()),
				balance.WithOutlierDetection(isFailure))
		}, false},
		{"RoundRobinServiceFuncs", func() tower.Service[string, string] {
			return balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](echo, echo))
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.ServiceSuite[string, string]{
				NewService:      tt.svc,
				Request:         "hello",
				ReservesNothing: tt.reservesNothing,
			}.Run(t)
		})
	}
}
