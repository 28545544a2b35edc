package hedge_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	handle = towertest.Handle[string, string]
)

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
	opts = append([]hedge.Option{hedge.WithMockLatencies(towerLatencies...)}, opts...)
	return hedge.New[string, string](mock, p, 10, 0.9, 60*time.Second, opts...), h, p
}

// caller is one tower.Call running on its own goroutine.
type caller struct {
	*towertest.Outcome[string]
	at time.Duration // when the call returned, since it started; read it after Wait
}

// goCall starts tower.Call(ctx, s, req) on its own goroutine and waits
// until it has returned or blocked. It must run inside a synctest bubble.
func goCall(ctx context.Context, s svc, req string) *caller {
	c := new(caller)
	start := time.Now()
	c.Outcome = towertest.Go(func() (string, error) {
		res, err := tower.Call(ctx, s, req)
		c.at = time.Since(start)
		return res, err
	})
	synctest.Wait()
	return c
}

// pending fails t if the call has returned.
func (c *caller) pending(t *testing.T) {
	t.Helper()
	synctest.Wait()
	if c.Done() {
		res, err := c.Wait()
		t.Fatalf("Call returned %q, %v; want it still waiting", res, err)
	}
}

// expect waits for the call and fails t unless it answered want at at.
func (c *caller) expect(t *testing.T, want string, at time.Duration) {
	t.Helper()
	if res, err := c.Wait(); err != nil || res != want || c.at != at {
		t.Fatalf("Call: got %q, %v at %v; want %q, nil at %v", res, err, c.at, want, at)
	}
}

// expectErr waits for the call and fails t unless it failed with err at
// at.
func (c *caller) expectErr(t *testing.T, err error, at time.Duration) {
	t.Helper()
	if res, got := c.Wait(); got != err || c.at != at {
		t.Fatalf("Call: got %q, %v at %v; want error %v at %v", res, got, c.at, err, at)
	}
}

// take returns the next request, which must be want and already there.
func take(t *testing.T, h *handle, want string) *towertest.Request[string, string] {
	t.Helper()
	synctest.Wait()
	return h.ExpectNow(t, want)
}

// noRequest fails t if the inner service has a request waiting.
func noRequest(t *testing.T, h *handle) {
	t.Helper()
	synctest.Wait()
	h.ExpectNone(t)
}

// checkCalls fails t unless the mock has received n requests and holds no
// reservation.
func checkCalls(t *testing.T, h *handle, n int) {
	t.Helper()
	synctest.Wait()
	if got := h.Calls(); got != n {
		t.Errorf("inner service got %d calls, want %d", got, n)
	}
	if got := h.Outstanding(); got != 0 {
		t.Errorf("inner service has %d reservations outstanding, want 0", got)
	}
}

// cancelled fails t unless r's context was cancelled.
func cancelled(t *testing.T, r *towertest.Request[string, string], what string) {
	t.Helper()
	if err := r.Context().Err(); err != context.Canceled {
		t.Errorf("%s's context: got %v, want %v", what, err, context.Canceled)
	}
}
