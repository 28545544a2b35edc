package load_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// echo answers its request at once.
var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})

// caller is a Call running on its own goroutine.
type caller struct{ *towertest.Outcome[string] }

// goCall gets a permit from svc and calls it with req on its own goroutine,
// then waits until the call has reached the mock behind svc. It must run
// inside a synctest bubble.
func goCall(t *testing.T, svc tower.Service[string, string], req string) caller {
	t.Helper()
	p, err := svc.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: got %v, want a permit", err)
	}
	c := caller{towertest.Go(func() (string, error) { return p.Call(t.Context(), req) })}
	synctest.Wait()
	return c
}

// expect waits for the call and fails t unless it answered want.
func (c caller) expect(t *testing.T, want string) {
	t.Helper()
	if res, err := c.Wait(); err != nil || res != want {
		t.Fatalf("Call: got %q, %v; want %q, nil", res, err, want)
	}
}

// take returns the request the mock must have received by now.
func take(t *testing.T, h *towertest.Handle[string, string], want string) *towertest.Request[string, string] {
	t.Helper()
	synctest.Wait()
	return h.ExpectNow(t, want)
}

// checkLoad fails t unless s's load is want exactly.
func checkLoad(t *testing.T, s interface{ Load() float64 }, want float64) {
	t.Helper()
	if got := s.Load(); got != want {
		t.Errorf("got load %v, want %v", got, want)
	}
}
