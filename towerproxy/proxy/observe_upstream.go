package proxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerproxy/internal/live"
)

// upstreamStats are the counters of an upstream by name, which outlive a
// reload: the Prometheus children, and the totals the live page turns
// into rates.
type upstreamStats struct {
	name            string
	retries         prometheus.Counter
	budgetExhausted prometheus.Counter
	ejections       prometheus.Counter
	shed            prometheus.Counter // by the upstream's limit
	rateLimited     prometheus.Counter // by a route's rate limit
	failures        map[string]prometheus.Counter

	goodput, errors, shedN, retriesN atomic.Int64
	shedLimit                        atomic.Int64   // by the limit alone, which shedN includes
	latency                          live.Histogram // of the requests answered
}

func newUpstreamStats(m *promMetrics, name string) *upstreamStats {
	s := &upstreamStats{
		name:            name,
		retries:         m.retries.WithLabelValues(name),
		budgetExhausted: m.budgetExhausted.WithLabelValues(name),
		ejections:       m.ejections.WithLabelValues(name),
		shed:            m.shed.WithLabelValues(shedUpstreamLimit, name),
		rateLimited:     m.shed.WithLabelValues(shedRateLimit, name),
		failures:        map[string]prometheus.Counter{},
	}
	for _, r := range []string{"timeout", "unavailable", "bad_gateway"} {
		s.failures[r] = m.failures.WithLabelValues(name, r)
	}
	return s
}

// An upstreamObs observes one upstream built from a configuration: its
// limit's numbers, its balancer's ejections, its retries and their
// budget, and its backends.
type upstreamObs struct {
	o           *observer
	stats       *upstreamStats
	limited     bool
	limit       *metrics.Counts // the adaptive limit's: Limit, InFlight, Waiting; an upstream that inherits its limit shares it (see reload.go)
	shed        *counterSink
	balance     *balanceSink
	retried     *counterSink
	budgetRatio float64

	mu       sync.Mutex
	backends map[string]*backendObs
}

func (o *observer) upstream(name string, cfg *Upstream) *upstreamObs {
	s := o.stats(name)
	u := &upstreamObs{
		o:        o,
		stats:    s,
		limited:  algorithm(cfg.Limit) != nil,
		limit:    new(metrics.Counts),
		shed:     &counterSink{kind: metrics.Shed, counter: s.shed, n: &s.shedLimit},
		balance:  &balanceSink{ejections: s.ejections},
		retried:  &counterSink{kind: metrics.Retried, counter: s.retries, n: &s.retriesN},
		backends: map[string]*backendObs{},
	}
	if cfg.Retry.Attempts > 1 {
		u.budgetRatio = float64(cfg.Retry.Budget)
	}
	return u
}

// The options that make an upstream's middleware report here.
func (u *upstreamObs) loadShed() loadshed.Option { return loadshed.WithMetrics(u.shed) }
func (u *upstreamObs) adaptive() adaptive.Option { return adaptive.WithMetrics(u.limitSink()) }
func (u *upstreamObs) limitSink() limitSink      { return limitSink{u.limit, u.shed} }
func (u *upstreamObs) retry() retry.Option       { return retry.WithMetrics(u.retried) }

// balanceEvent notes what the balancer's error handler got: an ejection
// marks its backend ejected for the time it is out.
func (u *upstreamObs) balanceEvent(err error) {
	if e, ok := errors.AsType[*balance.Ejection[string]](err); ok {
		if b := u.backend(e.Key, false); b != nil {
			b.ejectedUntil.Store(time.Now().Add(e.Duration).UnixNano())
		}
	}
}

// budget returns b counting the retries it refuses.
func (u *upstreamObs) budget(b retry.Budget) retry.Budget {
	return &countedBudget{Budget: b, refused: u.stats.budgetExhausted}
}

// countedBudget is a retry.Budget that counts the withdrawals refused.
type countedBudget struct {
	retry.Budget
	refused prometheus.Counter
}

func (b *countedBudget) Withdraw() bool {
	ok := b.Budget.Withdraw()
	if !ok {
		b.refused.Inc()
	}
	return ok
}

// policy returns p telling each request's record why it was retried.
func (u *upstreamObs) policy(p retry.Policy[*http.Request, *http.Response]) retry.Policy[*http.Request, *http.Response] {
	if !u.o.recording() {
		return p
	}
	return &notedPolicy{Policy: p}
}

// notedPolicy is a retry policy that notes, in the request's record, the
// cause of each retry its policy decides on.
type notedPolicy struct {
	retry.Policy[*http.Request, *http.Response]
}

func (n *notedPolicy) Retry(ctx context.Context, a *retry.Attempt[*http.Request, *http.Response]) (time.Duration, bool) {
	cause := ""
	if rec := recordFrom(ctx); rec != nil {
		cause = retryCause(a.Res, a.Err)
		defer func() {
			if cause != "" {
				rec.retry(cause)
			}
		}()
	}
	wait, again := n.Policy.Retry(ctx, a)
	if !again {
		cause = ""
	}
	return wait, again
}

// failed counts and notes a request the upstream's reverse proxy
// answered itself, with err: no backend answered it. A request whose
// body the client sent too slowly, broke off or made too large is noted,
// but is no failure of the upstream's (see upstream.failed).
func (u *upstreamObs) failed(r *http.Request, err error) {
	var reason string
	switch {
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil && !slowBody(r):
		return
	case errors.As(err, new(*http.MaxBytesError)) || errors.Is(err, errClientBody) || slowBody(r):
		if rec := recordFrom(r.Context()); rec != nil {
			rec.fail("client: " + err.Error())
		}
		return
	case errors.Is(err, context.DeadlineExceeded) || tower.IsTimeout(err):
		reason = "timeout"
	case tower.IsOverloaded(err) || tower.IsUnavailable(err) || errors.Is(err, balance.ErrNoEndpoints):
		reason = "unavailable"
	default:
		reason = "bad_gateway"
	}
	u.stats.failures[reason].Inc()
	if rec := recordFrom(r.Context()); rec != nil {
		rec.fail(reason + ": " + err.Error())
	}
}
