package towertest

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
)

// GoReady runs svc.Ready(ctx) on a goroutine of its own and returns its
// Outcome once that goroutine has returned or blocked: it calls
// synctest.Wait, and must run in a testing/synctest bubble. Callers
// started one after another so reach svc in the order they were started.
func GoReady[Req, Res any](ctx context.Context, svc tower.Service[Req, Res]) *Outcome[tower.Permit[Req, Res]] {
	return settled(Go(func() (tower.Permit[Req, Res], error) { return svc.Ready(ctx) }))
}

// GoCall calls p with req on a goroutine of its own, and returns the
// Outcome once that goroutine has returned or blocked, as [GoReady] does.
// The goroutine calls its own copy of p, so the caller's copy becomes a
// stale one that the Reserver refuses.
func GoCall[Req, Res any](ctx context.Context, p tower.Permit[Req, Res], req Req) *Outcome[Res] {
	return settled(Go(func() (Res, error) { return p.Call(ctx, req) }))
}

// GoRequest runs tower.Call(ctx, svc, req), Ready then Call, on a
// goroutine of its own, and returns the Outcome once that goroutine has
// returned or blocked, as [GoReady] does.
func GoRequest[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], req Req) *Outcome[Res] {
	return settled(Go(func() (Res, error) { return tower.Call(ctx, svc, req) }))
}

// settled returns o after synctest.Wait.
func settled[T any](o *Outcome[T]) *Outcome[T] {
	synctest.Wait()
	return o
}

// MustReady waits for svc to be ready, with t.Context(), and returns the
// permit. It fails t, and stops the test, if Ready returns an error.
func MustReady[Req, Res any](t testing.TB, svc tower.Service[Req, Res]) tower.Permit[Req, Res] {
	t.Helper()
	p, err := svc.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: got error %v, want a permit", err)
	}
	return p
}

// ReadyNow is [tower.ReadyNow] for a service that must not be broken: it
// returns the permit and true if svc has capacity now, a zero permit and
// false if not, and fails t, stopping the test, if svc returns an error.
func ReadyNow[Req, Res any](t testing.TB, svc tower.Service[Req, Res]) (tower.Permit[Req, Res], bool) {
	t.Helper()
	p, ok, err := tower.ReadyNow(svc)
	if err != nil {
		t.Fatalf("ReadyNow: got error %v, want none", err)
	}
	return p, ok
}

// CallThrough calls p with req on a goroutine of its own, answers with res
// the request that reaches h, and fails t unless that request is req and
// the call returns res: one round trip through a stack whose bottom is a
// [Mock]. It calls synctest.Wait, and must run in a testing/synctest
// bubble.
func CallThrough[Req, Res any](t testing.TB, p tower.Permit[Req, Res], h *Handle[Req, Res], req Req, res Res) {
	t.Helper()
	call := GoCall(t.Context(), p, req)
	h.ExpectSettled(t, req).Respond(res)
	call.ExpectValue(t, res)
}
