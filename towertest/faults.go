package towertest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
)

// The suite's fault injection: the inner service panics in Ready, at once
// or while a request waits for it, and in Call. The panic must reach the
// caller it concerns, and the layer must give back every reservation.

// injected is a panic value the suite injects, a distinct pointer each.
type injected struct{ where string }

func (i *injected) String() string { return "towertest: injected panic in " + i.where }

// request sends one request through svc on a goroutine of its own that
// recovers a panic, and returns how it ended.
func request[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], req Req) *Outcome[answer[Res]] {
	return Go(func() (a answer[Res], _ error) {
		defer func() { a.panic = recover() }()
		a.res, a.err = tower.Call(ctx, svc, req)
		return a, nil
	})
}

// panicReached fails t unless the request o ended with the panic v: raised
// again on the caller's goroutine, or returned as an error through which
// errors.As finds a *tower.PanicError of v, with a stack.
func panicReached[Res any](t *testing.T, o *Outcome[answer[Res]], v *injected) {
	t.Helper()
	synctest.Wait()
	if !o.Done() {
		t.Fatalf("the request is still waiting after the %v: the panic reached no caller", v)
	}
	a, _ := o.Wait()
	var pe *tower.PanicError
	if a.panic != nil {
		if a.panic != any(v) {
			t.Errorf("the caller's goroutine panicked with %v, want the %v", a.panic, v)
		}
	} else if errors.As(a.err, &pe) {
		if pe.Value != any(v) {
			t.Errorf("got a PanicError of %v, want one of the %v", pe.Value, v)
		}
		if len(pe.Stack) == 0 || pe.Where == "" {
			t.Errorf("the PanicError says neither where it happened nor its stack: %q, %d bytes of stack", pe.Where, len(pe.Stack))
		}
	} else {
		t.Errorf("the request ended with (%v, %v), want the %v: raised on the caller's goroutine, or returned as a *tower.PanicError", a.res, a.err, v)
	}
}

// readyPanics: the inner service's Ready panics, at once or while a
// request waits for it. The latter does not apply to a layer that does not
// wait (a load shedder), which has answered before the panic.
func (e *env[Req, Res]) readyPanics(t *testing.T, waited bool) {
	before := capacity(e.svc)
	v := &injected{"the inner service's Ready"}
	if !waited {
		e.h.PanicReady(v)
		panicReached(t, request(t.Context(), e.svc, e.req), v)
	} else {
		v.where += ", while a request waited"
		e.h.Allow(0)
		o := request(t.Context(), e.svc, e.req)
		synctest.Wait()
		if o.Done() {
			e.h.AllowAll()
			return
		}
		e.h.PanicReady(v)
		panicReached(t, o, v)
		e.h.AllowAll()
	}
	e.afterReadyPanic(t, v, before)
}

// afterReadyPanic checks a layer after the inner service's Ready panicked
// with v: it holds nothing of the inner service's, and either grants what
// it granted before or is broken for good with that PanicError.
func (e *env[Req, Res]) afterReadyPanic(t *testing.T, v *injected, before int) {
	t.Helper()
	e.h.ExpectOutstanding(t, 0)
	p, _, err := tower.ReadyNow(e.svc)
	p.Release()
	if err != nil {
		var pe *tower.PanicError
		if !errors.As(err, &pe) || pe.Value != any(v) {
			t.Errorf("after the panic, Ready fails with %v, want the PanicError of the %v (or no error)", err, v)
		}
		return
	}
	if after := capacity(e.svc); after != before {
		t.Errorf("the layer grants %d reservations at once after the panic, %d before: the panic kept capacity", after, before)
	}
	e.serves(t)
}

// callPanics: a panic in the inner service's Call breaks nothing.
func (e *env[Req, Res]) callPanics(t *testing.T) {
	v := &injected{"the inner service's Call"}
	o := request(t.Context(), e.svc, e.req)
	r, err := e.h.Next(t.Context())
	if err != nil {
		t.Fatalf("the inner service received no request: %v", err)
	}
	r.Panic(v)
	panicReached(t, o, v)
	e.h.ExpectOutstanding(t, 0)
	e.serves(t)
}

// serves checks that a request goes through the layer and its answer comes
// back, waiting as long as the layer makes it wait.
func (e *env[Req, Res]) serves(t *testing.T) {
	t.Helper()
	o := request(t.Context(), e.svc, e.req)
	r, err := e.h.Next(t.Context())
	if err != nil {
		t.Fatalf("the inner service received no request: %v", err)
	}
	r.Respond(e.res)
	got, _ := o.Wait()
	if got.panic != nil {
		t.Fatalf("the request panicked with %v", got.panic)
	}
	if err := e.judge(got.res, got.err); err != nil {
		t.Fatalf("Call: %v", err)
	}
}
