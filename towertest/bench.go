package towertest

import (
	"context"
	"runtime"
	"testing"

	"github.com/towergo/tower"
)

// Bench measures the overhead of svc per request: b.N requests, one after
// another, each a Ready, a Call with req and the response. It reports
// allocations, and fails b on the first error. Put a service that answers
// at once, such as a [tower.ServiceFunc], at the bottom of svc, so that
// what is measured is the stack above it.
func Bench[Req, Res any](b *testing.B, svc tower.Service[Req, Res], req Req) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	var res Res
	for b.Loop() {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatalf("Ready: %v", err)
		}
		if res, err = p.Call(ctx, req); err != nil {
			b.Fatalf("Call: %v", err)
		}
	}
	runtime.KeepAlive(res)
}

// BenchParallel is [Bench] from GOMAXPROCS goroutines at once (b.RunParallel):
// run it with -cpu 1,2 to see how svc scales.
func BenchParallel[Req, Res any](b *testing.B, svc tower.Service[Req, Res], req Req) {
	b.Helper()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var res Res
		for pb.Next() {
			var err error
			if res, err = tower.Call(ctx, svc, req); err != nil {
				panic(err) // b.Fatal may not be called from these goroutines
			}
		}
		runtime.KeepAlive(res)
	})
}

// AllocsPerRun returns the allocations of one call of f, as
// testing.AllocsPerRun counts them over runs calls, the least of five such
// counts. testing.AllocsPerRun reads the process's allocation counter, so
// a goroutine of another test that runs meanwhile (a server shutting down,
// a timer firing) adds its allocations to f's; the least of several counts
// is f's own.
func AllocsPerRun(runs int, f func()) float64 {
	least := testing.AllocsPerRun(runs, f)
	for range 4 {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}
