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

// ended is how one request ended, panicked set if it panicked on the
// caller's goroutine.
type ended[Res any] struct {
	res      Res
	err      error
	panicked any
}

// request sends one request through svc on a goroutine of its own that
// recovers a panic.
func request[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], req Req) *Outcome[ended[Res]] {
	return Go(func() (e ended[Res], _ error) {
		defer func() { e.panicked = recover() }()
		e.res, e.err = tower.Call(ctx, svc, req)
		return e, nil
	})
}

// panicReached fails t unless the request o ended with the panic v: raised
// again on the caller's goroutine, or returned as an error through which
// errors.As finds a *tower.PanicError of v, with a stack.
func panicReached[Res any](t *testing.T, o *Outcome[ended[Res]], v *injected) {
	t.Helper()
	synctest.Wait()
	if !o.Done() {
		t.Fatalf("the request is still waiting after the %v: the panic reached no caller", v)
	}
	e, _ := o.Wait()
	var pe *tower.PanicError
	if e.panicked != nil {
		if e.panicked != any(v) {
			t.Errorf("the caller's goroutine panicked with %v, want the %v", e.panicked, v)
		}
	} else if errors.As(e.err, &pe) {
		if pe.Value != any(v) {
			t.Errorf("got a PanicError of %v, want one of the %v", pe.Value, v)
		}
		if len(pe.Stack) == 0 || pe.Where == "" {
			t.Errorf("the PanicError says neither where it happened nor its stack: %q, %d bytes of stack", pe.Where, len(pe.Stack))
		}
	} else {
		t.Errorf("the request ended with (%v, %v), want the %v: raised on the caller's goroutine, or returned as a *tower.PanicError", e.res, e.err, v)
	}
}

func (s LayerSuite[Req, Res]) readyPanicsAtOnce(t *testing.T, e *layerEnv[Req, Res]) {
	before := capacity(e.svc)
	v := &injected{"the inner service's Ready"}
	e.h.PanicReady(v)
	panicReached(t, request(t.Context(), e.svc, s.Request), v)
	s.afterReadyPanic(t, e, v, before)
}

// readyPanicsWhileWaited: the inner service's Ready panics while a request
// waits for it. It does not apply to a layer that does not wait (a load
// shedder), which has answered before the panic.
func (s LayerSuite[Req, Res]) readyPanicsWhileWaited(t *testing.T, e *layerEnv[Req, Res]) {
	before := capacity(e.svc)
	v := &injected{"the inner service's Ready, while a request waited"}
	e.h.Allow(0)
	o := request(t.Context(), e.svc, s.Request)
	synctest.Wait()
	if o.Done() {
		e.h.AllowAll()
		return
	}
	e.h.PanicReady(v)
	panicReached(t, o, v)
	e.h.AllowAll()
	s.afterReadyPanic(t, e, v, before)
}

// afterReadyPanic checks a layer after the inner service's Ready panicked
// with v: it holds nothing of the inner service's, and either grants what
// it granted before or is broken for good with that PanicError.
func (s LayerSuite[Req, Res]) afterReadyPanic(t *testing.T, e *layerEnv[Req, Res], v *injected, before int) {
	t.Helper()
	synctest.Wait()
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding after the panic, want 0", n)
	}
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
	s.serves(t, e)
}

// callPanics: a panic in the inner service's Call breaks nothing.
func (s LayerSuite[Req, Res]) callPanics(t *testing.T, e *layerEnv[Req, Res]) {
	v := &injected{"the inner service's Call"}
	o := request(t.Context(), e.svc, s.Request)
	r, err := e.h.Next(t.Context())
	if err != nil {
		t.Fatalf("the inner service received no request: %v", err)
	}
	r.Panic(v)
	panicReached(t, o, v)
	synctest.Wait()
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding after the panic, want 0", n)
	}
	s.serves(t, e)
}

// serves checks that a request goes through the layer and its answer comes
// back, waiting as long as the layer makes it wait.
func (s LayerSuite[Req, Res]) serves(t *testing.T, e *layerEnv[Req, Res]) {
	t.Helper()
	o := request(t.Context(), e.svc, s.Request)
	r, err := e.h.Next(t.Context())
	if err != nil {
		t.Fatalf("the inner service received no request: %v", err)
	}
	r.Respond(s.Response)
	got, _ := o.Wait()
	if got.panicked != nil {
		t.Fatalf("the request panicked with %v", got.panicked)
	}
	s.checkResponse(t, got.res, got.err)
}
