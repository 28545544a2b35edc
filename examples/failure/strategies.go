package main

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
)

// A strategy is a client: it sends requests over the five backends that
// base serves. close stops what the client started.
type strategy struct {
	name   string
	role   role
	client func(base http.RoundTripper) (client http.RoundTripper, close func())
}

// role is what a strategy is in the comparison.
type role uint8

const (
	baseline role = iota // P2C alone, or with tower's retry
	ourOwn               // the full stack of this repository
	peer                 // another library's
)

// strategies are the clients compared, in the order they print.
func strategies() []strategy {
	return []strategy{
		{"p2c", baseline, p2c},
		{"p2c+retry", baseline, p2cRetry},
		{"ours", ourOwn, ours},
		{"failsafe", peer, failsafeClient},
	}
}

// endpoints returns one endpoint per backend, each under stack, sending
// with the round tripper base returns for its host.
func endpoints(base func(host string) http.RoundTripper, stack tower.Layer[*http.Request, *http.Response]) *discover.List[load.Service[*http.Request, *http.Response]] {
	var eps []load.Service[*http.Request, *http.Response]
	for _, h := range hosts {
		eps = append(eps, towerhttp.NewEndpoint(base(h), &url.URL{Scheme: "http", Host: h}, stack))
	}
	return discover.NewList(eps...)
}

// p2c is the balancer alone: each request goes to the less loaded of two
// endpoints, by PeakEwma, and is sent once.
func p2c(base http.RoundTripper) (http.RoundTripper, func()) {
	t := towerhttp.NewBalancedTransport(endpoints(same(base), towerhttp.ClientStack()), towerhttp.ClientStack(),
		balance.WithRand(newRand(1)))
	return t, func() { t.Close() }
}

// p2cRetry adds what tower offers: a Retry of every error and 5xx, up to
// three attempts, under tower's default budget (10s, 10 per second, 20%).
func p2cRetry(base http.RoundTripper) (http.RoundTripper, func()) {
	policy := retry.NewPolicy[*http.Request, *http.Response](serverError,
		retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, 0.2)))
	t := towerhttp.NewBalancedTransport(endpoints(same(base), towerhttp.ClientStack()),
		towerhttp.ClientStack().RetryPolicy(policy),
		balance.WithRand(newRand(2)))
	return t, func() { t.Close() }
}

// serverError is tower-style retry's classifier: an error, or a 5xx.
func serverError(res *http.Response, err error) bool {
	if err != nil {
		return true
	}
	if res.StatusCode >= 500 {
		res.Body.Close()
		return true
	}
	return false
}

// same is the base of endpoints that all send with rt.
func same(rt http.RoundTripper) func(string) http.RoundTripper {
	return func(string) http.RoundTripper { return rt }
}

// breakDelay is how long a breaker stays open before it lets a probe
// through: Polly's default, and the one failsafe-go is given too.
const breakDelay = 5 * time.Second

// newRand returns a seeded source for a balancer.
func newRand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
