package balance_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

var sizes = []int{2, 10, 100}

// benchmarkCall measures one request through svc: Ready (the pick), Call,
// and the response.
func benchmarkCall(b *testing.B, svc tower.Service[int, int]) {
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Call(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		n += res
	}
	sink += n
}

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
func BenchmarkBaseline(b *testing.B) { benchmarkCall(b, echoInt) }

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
				benchmarkCall(b, bal)
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
			benchmarkCall(b, bal)
		})
	}
}

// BenchmarkP2CParallel shares one P2C over 10 PeakEwma endpoints among
// GOMAXPROCS callers: they contend for the ready cache's lock.
func BenchmarkP2CParallel(b *testing.B) {
	bal := p2c(10, metrics[2].make)
	defer bal.Close()
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			p, err := bal.Ready(ctx)
			if err != nil {
				panic(err)
			}
			res, err := p.Call(ctx, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		psink.Add(int64(n))
	})
}
