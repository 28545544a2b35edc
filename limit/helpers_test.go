package limit_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	permit = tower.Permit[string, string]
	handle = towertest.Handle[string, string]
)

// echoCall calls p with req and fails t unless the call answers req (the
// inner service echoes).
func echoCall(t *testing.T, p permit, req string) {
	t.Helper()
	if res, err := p.Call(t.Context(), req); err != nil || res != req {
		t.Fatalf("Call: got %q, %v; want %q, nil", res, err, req)
	}
}

// release waits for the Ready of r, then releases its permit unused.
func release(t *testing.T, r *towertest.Outcome[permit]) {
	t.Helper()
	p := r.Value(t)
	p.Release()
}

// callNow sends req through s, Ready and Call, and fails t unless it is
// answered with req (the inner service echoes).
func callNow(t *testing.T, s svc, req string) {
	t.Helper()
	res, err := tower.Call(t.Context(), s, req)
	if err != nil || res != req {
		t.Fatalf("Call: got %q, %v; want %q, nil", res, err, req)
	}
}

// echo answers its request at once.
var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})
