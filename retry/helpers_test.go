package retry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

type (
	svc     = tower.Service[string, string]
	handle  = towertest.Handle[string, string]
	attempt = retry.Attempt[string, string]
)

// newRetry returns a Retry following policy over a mock, and the mock's
// handle.
func newRetry(policy retry.Policy[string, string]) (*retry.Retry[string, string], *handle) {
	mock, h := towertest.NewMock[string, string]()
	return retry.New[string, string](mock, policy), h
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

// expect waits for the call and fails t unless it answered want.
func (c *caller) expect(t *testing.T, want string) {
	t.Helper()
	if res, err := c.Wait(); err != nil || res != want {
		t.Fatalf("Call: got %q, %v; want %q, nil", res, err, want)
	}
}

// expectErr waits for the call and fails t unless it failed with an error
// whose message is want.
func (c *caller) expectErr(t *testing.T, want string) {
	t.Helper()
	if res, err := c.Wait(); err == nil || err.Error() != want {
		t.Fatalf("Call: got %q, %v; want error %q", res, err, want)
	}
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

// echo answers its request at once.
var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})
