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
