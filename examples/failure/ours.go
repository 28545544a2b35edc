package main

import (
	"net/http"
	"time"

	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
)

// ours is the full stack of this repository, every parameter at its
// default but the budget's share:
//
//   - per backend, a breaker (package breaker) that trips at 5 failures in
//     a row and makes its endpoint not ready while open, so the balancer
//     passes it over;
//   - the balancer, P2C with outlier detection, which ejects an endpoint
//     at 5 failures in a row or when its success rate is an outlier;
//   - for the whole client, the protocol-aware retry of towerhttp and a
//     hedge at the p95 of the last second's latencies;
//   - one budget for the retries, the hedges and the breakers' probes:
//     10% of the requests, and a reserve of one a second.
func ours(base http.RoundTripper) (http.RoundTripper, func()) {
	budget := retry.NewTPSBudget(10*time.Second, 1, 0.1)
	perBackend := towerhttp.ClientStack().
		CircuitBreaker(failedOrAbandoned, breaker.WithBudget(budget),
			breaker.WithConsecutiveFailures(5), breaker.WithFailureRatio(0.2, 20, breaker.LastCalls(20)), breaker.WithSuccesses(3),
			breaker.WithOpenDelay(time.Second, 5*time.Second))
	client := towerhttp.ClientStack().
		RetryPolicy(towerhttp.NewRetryPolicy(retry.WithBudget(budget))).
		Hedge(hedgeGET{}, 100, 0.99, time.Second, hedge.WithBudget(retry.DrawOnly(budget)))
	t := towerhttp.NewBalancedTransport(endpoints(same(base), perBackend), client,
		balance.WithRand(newRand(3)),
		balance.WithOutlierDetection(towerhttp.Failure, balance.ConsecutiveFailures(0)))
	return t, func() { t.Close() }
}

// hedgeGET hedges requests that can be sent twice.
type hedgeGET struct{}

func (hedgeGET) Clone(req *http.Request) (*http.Request, bool) { return towerhttp.CloneRequest(req) }
func (hedgeGET) CanRetry(req *http.Request) bool               { return req.Method == http.MethodGet }

// failedOrAbandoned is the breakers' classifier: towerhttp.Failure, and a
// call cancelled too. The client's hedge cancels the slower of two calls,
// and a backend that has stopped answering is always the slower: counted,
// its cancelled calls open its breaker after five; not counted, nothing
// would, as its requests never end otherwise. A healthy backend loses one
// race in a hundred, far from five in a row or a fifth of twenty.
func failedOrAbandoned(res *http.Response, err error) bool {
	return err != nil || towerhttp.Failure(res, err)
}
