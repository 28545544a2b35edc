package main

import (
	"net/http"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/towerhttp"
)

// failsafeClient is failsafe-go v0.9.8 as its HTTP documentation builds
// a client, over the same P2C balancer: per backend, a circuit breaker
// (failsafehttp round tripper) that opens after 5 consecutive failures
// (an error or a 5xx) for 5s and closes after a success in half-open;
// for the whole client, its HTTP retry policy (failsafehttp's: every
// error but a few and every 5xx but 501 and 429, 2 retries, Retry-After
// honoured) and its hedge policy at the p95 of recent latencies, both
// drawing on one of its budgets at its defaults (20% of the executions
// in flight, at least 3). failsafe-go has no balancer and no readiness:
// an open breaker fails its request at once with circuitbreaker's
// ErrOpen, which the retry then sends again through the balancer.
func failsafeClient(base http.RoundTripper) (http.RoundTripper, func()) {
	perBackend := func(string) http.RoundTripper {
		cb := circuitbreaker.NewBuilder[*http.Response]().
			HandleIf(serverErrorOnly).
			WithFailureThreshold(5).
			WithDelay(breakDelay).
			Build()
		return failsafehttp.NewRoundTripper(base, cb)
	}
	b := budget.NewBuilder().Build()
	rp := failsafehttp.NewRetryPolicyBuilder().WithBudget(b).Build()
	hp := hedgepolicy.NewBuilderWithDelayQuantile[*http.Response](0.95, 100, 100).WithBudget(b).Build()
	t := towerhttp.NewBalancedTransport(endpoints(perBackend, towerhttp.ClientStack()), towerhttp.ClientStack(),
		balance.WithRand(newRand(4)))
	return failsafehttp.NewRoundTripper(t, rp, hp), func() { t.Close() }
}

// serverErrorOnly tells failures for a breaker, without touching the
// response: an error or a 5xx.
func serverErrorOnly(res *http.Response, err error) bool {
	return err != nil || res.StatusCode >= 500
}
