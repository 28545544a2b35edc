package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// benchmarkCall measures Ready, Call and the response through svc.
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

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { benchmarkCall(b, echoInt) }

// BenchmarkRetry is a first attempt that succeeds, under the default
// StandardPolicy.
func BenchmarkRetry(b *testing.B) {
	benchmarkCall(b, retry.New(echoInt, retry.NewPolicy[int, int](nil)))
}

// BenchmarkRetryBudget adds a TPSBudget: one deposit per request.
func BenchmarkRetryBudget(b *testing.B) {
	policy := retry.NewPolicy[int, int](nil, retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, 0.2)))
	benchmarkCall(b, retry.New(echoInt, policy))
}

// BenchmarkRetrySession is a SessionPolicy that allocates a policy per
// request.
func BenchmarkRetrySession(b *testing.B) {
	benchmarkCall(b, retry.New(echoInt, retry.Policy[int, int](&intSessions{})))
}

type intSessions struct{ intLimit }

type intLimit struct{ left int }

func (p *intLimit) Clone(req int) (int, bool) { return req, true }

func (p *intLimit) Retry(_ context.Context, a *retry.Attempt[int, int]) (time.Duration, bool) {
	if a.Err != nil && p.left > 0 {
		p.left--
		return 0, true
	}
	return 0, false
}

func (*intSessions) NewSession() retry.Policy[int, int] { return &intLimit{left: 2} }

// BenchmarkRetryOnce is a request whose first attempt fails and whose
// retry succeeds: a second Ready and Call, no backoff.
func BenchmarkRetryOnce(b *testing.B) {
	errFirst := errors.New("first")
	first := true
	flaky := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) {
		if first = !first; !first {
			return 0, errFirst
		}
		return req, nil
	})
	benchmarkCall(b, retry.New(flaky, retry.NewPolicy[int, int](nil)))
}

// BenchmarkRetryParallel shares one Retry with a budget among GOMAXPROCS
// callers.
func BenchmarkRetryParallel(b *testing.B) {
	policy := retry.NewPolicy[int, int](nil, retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, 0.2)))
	svc := retry.New(echoInt, policy)
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			p, err := svc.Ready(ctx)
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

// BenchmarkTPSBudget is one deposit and one withdrawal.
func BenchmarkTPSBudget(b *testing.B) {
	budget := retry.NewTPSBudget(10*time.Second, 10, 1)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		budget.Deposit()
		if budget.Withdraw() {
			n++
		}
	}
	sink += n
}
