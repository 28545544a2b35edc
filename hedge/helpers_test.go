package hedge_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/towertest"
)

type handle = towertest.Handle[string, string]

const (
	notRetryable = "NOT_RETRYABLE"
	notClonable  = "NOT_CLONABLE"
)

// testPolicy is tower's TestPolicy: it does not clone "NOT_CLONABLE", and
// does not let "NOT_RETRYABLE" be hedged. It records when CanRetry is
// asked, since start.
type testPolicy struct {
	start   time.Time
	mu      sync.Mutex
	askedAt []time.Duration
}

func (p *testPolicy) Clone(req string) (string, bool) { return req, req != notClonable }

func (p *testPolicy) CanRetry(req string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.askedAt = append(p.askedAt, time.Since(p.start))
	return req != notRetryable
}

// asked fails t unless CanRetry was asked at the times want.
func (p *testPolicy) asked(t *testing.T, want ...time.Duration) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if fmt.Sprint(p.askedAt) != fmt.Sprint(want) {
		t.Errorf("CanRetry asked at %v, want %v", p.askedAt, want)
	}
}

// towerLatencies are the mock latencies of tower's hedge tests: their p90
// is 10ms.
var towerLatencies = []uint64{1, 1, 1, 1, 1, 1, 1, 1, 10, 10}

// newHedge is tower's new_service: a Hedge over a mock, with 10 data
// points needed, the 90th percentile, a period of 60s, and towerLatencies
// in the histogram the delay is read from. It must run inside a synctest
// bubble.
func newHedge(opts ...hedge.Option) (*hedge.Hedge[string, string], *handle, *testPolicy) {
	mock, h := towertest.NewMock[string, string]()
	p := &testPolicy{start: time.Now()}
	return hedge.MockLatencies(hedge.New[string, string](mock, p, 10, 0.9, 60*time.Second, opts...), towerLatencies...), h, p
}

// cancelled fails t unless r's context was cancelled.
func cancelled(t *testing.T, r *towertest.Request[string, string], what string) {
	t.Helper()
	if err := r.Context().Err(); err != context.Canceled {
		t.Errorf("%s's context: got %v, want %v", what, err, context.Canceled)
	}
}
