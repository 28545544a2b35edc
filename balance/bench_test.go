package balance_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

var sizes = []int{2, 10, 100}

type maker func() load.Service[int, int]

var metrics = []struct {
	name string
	make maker
}{
	{"Constant", func() load.Service[int, int] { return load.NewConstant[int, int](echoInt, 1) }},
	{"PendingRequests", func() load.Service[int, int] { return load.NewPendingRequests[int, int](echoInt) }},
	{"PeakEwma", func() load.Service[int, int] {
		return load.NewPeakEwma[int, int](echoInt, 30*time.Millisecond, 10*time.Second)
	}},
}

func p2c(n int, mk maker) *balance.P2C[int, int, int] {
	eps := make([]load.Service[int, int], n)
	for i := range eps {
		eps[i] = mk()
	}
	return balance.NewP2C(discover.NewList(eps...), balance.WithRand(rand.New(rand.NewPCG(1, 2))))
}

// BenchmarkBaseline is the endpoint alone, for comparison.
func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, echoInt, 1) }

// BenchmarkP2C is the per-request overhead of P2C over 2, 10 and 100
// endpoints, each wrapped in a load metric: the pick reads two loads, takes
// the endpoint's held permit and asks it for the next; the call goes
// through the metric.
func BenchmarkP2C(b *testing.B) {
	for _, m := range metrics {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", m.name, n), func(b *testing.B) {
				bal := p2c(n, m.make)
				defer bal.Close()
				towertest.Bench(b, bal, 1)
			})
		}
	}
}

// BenchmarkRoundRobin is the per-request overhead of RoundRobin over 2, 10
// and 100 endpoints that are ServiceFuncs.
func BenchmarkRoundRobin(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			eps := make([]tower.Service[int, int], n)
			for i := range eps {
				eps[i] = echoInt
			}
			bal := balance.NewRoundRobin(discover.NewList(eps...))
			defer bal.Close()
			towertest.Bench(b, bal, 1)
		})
	}
}

// BenchmarkP2CParallel shares one P2C over 10 PeakEwma endpoints among
// GOMAXPROCS callers: they contend for the ready cache's lock.
func BenchmarkP2CParallel(b *testing.B) {
	bal := p2c(10, metrics[2].make)
	defer bal.Close()
	towertest.BenchParallel(b, bal, 1)
}

// BenchmarkP2COutlierDetection is P2C over 10 PendingRequests endpoints
// without and with outlier detection (both detectors on, the defaults):
// the difference is the wrapper's permit, the classifier, a clock reading
// for the success-rate interval and the per-endpoint counts.
func BenchmarkP2COutlierDetection(b *testing.B) {
	failed := func(_ int, err error) bool { return err != nil }
	for _, tt := range []struct {
		name string
		opts []balance.Option
	}{
		{"Off", nil},
		{"On", []balance.Option{balance.WithOutlierDetection(failed)}},
		{"ConsecutiveOnly", []balance.Option{balance.WithOutlierDetection(failed, balance.SuccessRateMinHosts(0))}},
	} {
		for _, parallel := range []bool{false, true} {
			name := tt.name
			if parallel {
				name += "/Parallel"
			}
			b.Run(name, func(b *testing.B) {
				eps := make([]load.Service[int, int], 10)
				for i := range eps {
					eps[i] = load.NewPendingRequests[int, int](echoInt)
				}
				opts := append([]balance.Option{balance.WithRand(rand.New(rand.NewPCG(1, 2)))}, tt.opts...)
				bal := balance.NewP2C(discover.NewList(eps...), opts...)
				defer bal.Close()
				if parallel {
					towertest.BenchParallel(b, bal, 1)
				} else {
					towertest.Bench(b, bal, 1)
				}
			})
		}
	}
}
