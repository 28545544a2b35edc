package limit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	permit = tower.Permit[string, string]
	handle = towertest.Handle[string, string]
)

// readier is a Ready running on its own goroutine.
type readier struct {
	*towertest.Outcome[permit]
	at time.Duration // when Ready returned, since the start passed in; read it after Wait
}

// goReady starts s.Ready(ctx) and waits until it has returned or blocked,
// so that readiers started one after another queue in order. It must run
// inside a synctest bubble.
func goReady(s svc, ctx context.Context, start time.Time) *readier {
	r := new(readier)
	r.Outcome = towertest.Go(func() (permit, error) {
		p, err := s.Ready(ctx)
		r.at = time.Since(start)
		return p, err
	})
	synctest.Wait()
	return r
}

// permit waits for Ready and fails t unless it returned a permit.
func (r *readier) permit(t *testing.T) permit {
	t.Helper()
	p, err := r.Wait()
	if err != nil {
		t.Fatalf("Ready: got %v, want a permit", err)
	}
	return p
}

// call waits for Ready, then calls the permit with req and fails t unless
// the call answers req (the inner service echoes).
func (r *readier) call(t *testing.T, req string) {
	t.Helper()
	p := r.permit(t)
	if res, err := p.Call(t.Context(), req); err != nil || res != req {
		t.Fatalf("Call: got %q, %v; want %q, nil", res, err, req)
	}
}

// release waits for Ready, then releases the permit unused.
func (r *readier) release(t *testing.T) {
	t.Helper()
	p := r.permit(t)
	p.Release()
}

// caller is a Call running on its own goroutine.
type caller struct{ *towertest.Outcome[string] }

// goCall calls p with req on its own goroutine, and waits until the call has
// reached the inner service or returned. It must run inside a synctest
// bubble.
func goCall(ctx context.Context, p permit, req string) caller {
	c := caller{towertest.Go(func() (string, error) { return p.Call(ctx, req) })}
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

// mustReady gets a permit from s or fails t.
func mustReady(t *testing.T, s svc) permit {
	t.Helper()
	p, err := s.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: got %v, want a permit", err)
	}
	return p
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

// readyNow reports whether s has capacity now, failing t on an error.
func readyNow(t *testing.T, s svc) (permit, bool) {
	t.Helper()
	p, ok, err := tower.ReadyNow(s)
	if err != nil {
		t.Fatalf("ReadyNow: got error %v, want none", err)
	}
	return p, ok
}

// take answers the next request, which must be want and already there.
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

// echo answers its request at once.
var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})
