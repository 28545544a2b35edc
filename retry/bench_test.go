package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// sink keeps the benchmarks' results alive.
var sink int

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, echoInt, 1) }

// BenchmarkRetry is a first attempt that succeeds, under the default
// StandardPolicy.
func BenchmarkRetry(b *testing.B) {
	towertest.Bench(b, retry.New(echoInt, retry.NewPolicy[int, int](retry.AnyError)), 1)
}

// BenchmarkRetryBudget adds a TPSBudget: one deposit per request.
func BenchmarkRetryBudget(b *testing.B) {
	policy := retry.NewPolicy[int, int](retry.AnyError, retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, 0.2)))
	towertest.Bench(b, retry.New(echoInt, policy), 1)
}

// BenchmarkRetrySession is a SessionPolicy that allocates a policy per
// request.
func BenchmarkRetrySession(b *testing.B) {
	towertest.Bench(b, retry.New(echoInt, retry.Policy[int, int](&intSessions{})), 1)
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
	towertest.Bench(b, retry.New(failEveryOther(), retry.NewPolicy[int, int](retry.AnyError)), 1)
}

// failEveryOther returns a service that fails every other request, the
// first one first, and echoes the others.
func failEveryOther() tower.Service[int, int] {
	errFirst := errors.New("first")
	first := true
	return tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) {
		if first = !first; !first {
			return 0, errFirst
		}
		return req, nil
	})
}

// BenchmarkRetryParallel shares one Retry with a budget among GOMAXPROCS
// callers.
func BenchmarkRetryParallel(b *testing.B) {
	policy := retry.NewPolicy[int, int](retry.AnyError, retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, 0.2)))
	towertest.BenchParallel(b, retry.New(echoInt, policy), 1)
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
