package towertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
)

// LayerSuite is the conformance suite for a [tower.Layer]: it wraps a [Mock]
// in the layer and checks that the result keeps the readiness contract
// written in package tower's doc. Every test runs in its own
// testing/synctest bubble, so a goroutine the layer leaves behind fails it.
type LayerSuite[Req, Res any] struct {
	// NewLayer returns a fresh layer for each test. If the layer, or the
	// service it builds, has a Close method, the suite calls it when the
	// test ends.
	NewLayer func() tower.Layer[Req, Res]
	// Request is what the tests send through the layer.
	Request Req
	// Response is what the mock answers.
	Response Res
	// Opaque says the layer changes requests or responses, so the suite
	// must not compare what the mock receives with Request, or what the
	// caller gets with Response.
	Opaque bool
}

// Run runs the suite as subtests of t.
func (s LayerSuite[Req, Res]) Run(t *testing.T) {
	if s.NewLayer == nil {
		t.Fatal("towertest.LayerSuite: NewLayer is nil")
	}
	tests := []struct {
		name string
		test func(*testing.T, *layerEnv[Req, Res])
	}{
		{"CallReachesInnerAndAnswers", s.callAnswers},
		{"ReadyWithDoneContextWhenFree", s.readyDoneCtx},
		{"ReleaseUnusedGivesCapacityBack", s.releaseUnused},
		{"SecondCallPanics", s.secondCallPanics},
		{"StaleCopyIsRefused", s.staleCopy},
		{"ContextEndsWhileWaiting", s.ctxEndsWhileWaiting},
		{"InnerReadyFailure", s.innerReadyFailure},
		{"CallContextReachesInner", s.callContext},
		{"ConcurrentCallers", s.concurrentCallers},
		{"InnerReadyPanicsAtOnce", s.readyPanicsAtOnce},
		{"InnerReadyPanicsWhileWaited", s.readyPanicsWhileWaited},
		{"InnerCallPanics", s.callPanics},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				env := s.setup(t)
				tt.test(t, env)
			})
		})
	}
}

type layerEnv[Req, Res any] struct {
	svc tower.Service[Req, Res]
	h   *Handle[Req, Res]
}

func (s LayerSuite[Req, Res]) setup(t *testing.T) *layerEnv[Req, Res] {
	mock, h := NewMock[Req, Res]()
	l := s.NewLayer()
	svc := l.Wrap(mock)
	t.Cleanup(func() {
		closeIfCloser(t, svc)
		closeIfCloser(t, l)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("inner service has %d reservations outstanding at the end, want 0", n)
		}
	})
	return &layerEnv[Req, Res]{svc: svc, h: h}
}

func closeIfCloser(t *testing.T, v any) {
	if c, ok := v.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// call runs p.Call on its own goroutine and returns a function that waits
// for its outcome.
func call[Req, Res any](ctx context.Context, p *tower.Permit[Req, Res], req Req) func() (Res, error) {
	var (
		res Res
		err error
		wg  sync.WaitGroup
	)
	wg.Go(func() { res, err = p.Call(ctx, req) })
	return func() (Res, error) {
		wg.Wait()
		return res, err
	}
}

// answer takes the request the mock must have received by now and answers
// it with the suite's response.
func (s LayerSuite[Req, Res]) answer(t *testing.T, h *Handle[Req, Res]) *Request[Req, Res] {
	t.Helper()
	synctest.Wait()
	r, ok := h.TryNext()
	if !ok {
		t.Fatal("the inner service received no request")
	}
	if !s.Opaque && !reflect.DeepEqual(r.Value, s.Request) {
		t.Errorf("inner service got request %v, want %v", r.Value, s.Request)
	}
	r.Respond(s.Response)
	return r
}

func (s LayerSuite[Req, Res]) checkResponse(t *testing.T, res Res, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if !s.Opaque && !reflect.DeepEqual(res, s.Response) {
		t.Errorf("got response %v, want %v", res, s.Response)
	}
}

func (s LayerSuite[Req, Res]) mustReady(t *testing.T, ctx context.Context, svc tower.Service[Req, Res]) tower.Permit[Req, Res] {
	t.Helper()
	p, err := svc.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if !p.Held() {
		t.Fatal("Ready returned no error and an empty permit")
	}
	return p
}

// callAnswers: a request goes through to the inner service, and its answer
// comes back.
func (s LayerSuite[Req, Res]) callAnswers(t *testing.T, e *layerEnv[Req, Res]) {
	p := s.mustReady(t, t.Context(), e.svc)
	wait := call(t.Context(), &p, s.Request)
	s.answer(t, e.h)
	res, err := wait()
	s.checkResponse(t, res, err)
	if n := e.h.Calls(); n != 1 {
		t.Errorf("inner service got %d calls, want 1", n)
	}
}

// readyDoneCtx: capacity that is free is granted even to a done context.
func (s LayerSuite[Req, Res]) readyDoneCtx(t *testing.T, e *layerEnv[Req, Res]) {
	done, cancel := context.WithCancel(t.Context())
	cancel()
	p := s.mustReady(t, done, e.svc)
	wait := call(t.Context(), &p, s.Request)
	s.answer(t, e.h)
	res, err := wait()
	s.checkResponse(t, res, err)
}

// releaseUnused: a permit released unused gives back everything, again and
// again, and never reaches the inner service's call.
func (s LayerSuite[Req, Res]) releaseUnused(t *testing.T, e *layerEnv[Req, Res]) {
	for i := range 10 {
		p, ok, err := tower.ReadyNow(e.svc)
		if err != nil || !ok {
			t.Fatalf("round %d: ReadyNow = %v, %v; want a permit: capacity released unused must be free again", i, ok, err)
		}
		p.Release()
		p.Release() // twice is harmless
		if n := e.h.Outstanding(); n != 0 {
			t.Fatalf("round %d: inner service has %d reservations outstanding after Release, want 0", i, n)
		}
	}
	synctest.Wait()
	if n := e.h.Calls(); n != 0 {
		t.Errorf("inner service got %d calls from released permits, want 0", n)
	}
}

// secondCallPanics: a permit is called once; calling it again panics, and
// releasing it after the call does nothing.
func (s LayerSuite[Req, Res]) secondCallPanics(t *testing.T, e *layerEnv[Req, Res]) {
	p := s.mustReady(t, t.Context(), e.svc)
	wait := call(t.Context(), &p, s.Request)
	s.answer(t, e.h)
	res, err := wait()
	s.checkResponse(t, res, err)
	p.Release()
	mustPanicTower(t, "second Call", func() { p.Call(t.Context(), s.Request) })
	if n := e.h.Calls(); n != 1 {
		t.Errorf("inner service got %d calls, want 1", n)
	}
}

// staleCopy: once a permit is used through one copy, the other copies are
// stale: their Call panics and their Release does nothing, neither in the
// inner service nor in the layer's own capacity.
func (s LayerSuite[Req, Res]) staleCopy(t *testing.T, e *layerEnv[Req, Res]) {
	p := s.mustReady(t, t.Context(), e.svc)
	q, r := p, p
	wait := call(t.Context(), &p, s.Request)
	s.answer(t, e.h)
	res, err := wait()
	s.checkResponse(t, res, err)
	// Measured after the call, which may use capacity up for good (a place
	// in a rate window), and before any stale copy is touched.
	before := capacity(e.svc)
	q.Release()
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("a stale copy's Release reached the inner service: %d reservations outstanding, want 0", n)
	}
	mustPanicTower(t, "Call on a stale copy", func() { r.Call(t.Context(), s.Request) })
	if after := capacity(e.svc); after != before {
		t.Errorf("the layer grants %d reservations at once after a called permit's stale copies were used, %d before: a stale copy gave capacity back twice", after, before)
	}

	// And the other way round: released through one copy, called and
	// released through others.
	p = s.mustReady(t, t.Context(), e.svc)
	q, r = p, p
	p.Release()
	before = capacity(e.svc)
	mustPanicTower(t, "Call on a copy of a released permit", func() { q.Call(t.Context(), s.Request) })
	r.Release()
	if after := capacity(e.svc); after != before {
		t.Errorf("the layer grants %d reservations at once after a released permit's stale copies were used, %d before: a stale copy gave capacity back twice", after, before)
	}
	synctest.Wait()
	if n := e.h.Calls(); n != 1 {
		t.Errorf("inner service got %d calls, want 1", n)
	}
}

// capacity returns how many reservations svc grants at once without
// waiting, up to 64, and gives them back last taken first: a token bucket
// takes back only a token that no token was taken after.
func capacity[Req, Res any](svc tower.Service[Req, Res]) int {
	var held []tower.Permit[Req, Res]
	for len(held) < 64 {
		p, ok, err := tower.ReadyNow(svc)
		if !ok || err != nil {
			break
		}
		held = append(held, p)
	}
	for i := range held {
		held[len(held)-1-i].Release()
	}
	return len(held)
}

// ctxEndsWhileWaiting: the inner service is not ready; the caller's
// context ends while it waits, in Ready or in Call. The caller gets its
// context's error, nothing reaches the inner service, and nothing stays
// reserved.
func (s LayerSuite[Req, Res]) ctxEndsWhileWaiting(t *testing.T, e *layerEnv[Req, Res]) {
	e.h.Allow(0)
	ctx, cancel := context.WithCancel(t.Context())
	var (
		readyErr, callErr error
		called            bool
		wg                sync.WaitGroup
	)
	wg.Go(func() {
		p, err := e.svc.Ready(ctx)
		if readyErr = err; err != nil {
			return
		}
		called = true
		_, callErr = p.Call(ctx, s.Request)
	})
	synctest.Wait()
	cancel()
	wg.Wait()
	if readyErr != nil {
		if readyErr != ctx.Err() {
			t.Errorf("Ready returned %v, want ctx.Err() unchanged (%v)", readyErr, ctx.Err())
		}
	} else if called && callErr == nil {
		t.Error("Call succeeded although the inner service never became ready")
	}
	if n := e.h.Calls(); n != 0 {
		t.Errorf("inner service got %d calls, want 0", n)
	}
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding, want 0", n)
	}

	// Nothing leaked: once the inner service is ready, requests go through.
	e.h.AllowAll()
	p := s.mustReady(t, t.Context(), e.svc)
	wait := call(t.Context(), &p, s.Request)
	s.answer(t, e.h)
	res, err := wait()
	s.checkResponse(t, res, err)
}

// innerReadyFailure: an inner service that fails readiness makes the layer
// fail with that error, in Ready or, for a layer that queues, in Call.
func (s LayerSuite[Req, Res]) innerReadyFailure(t *testing.T, e *layerEnv[Req, Res]) {
	broken := errors.New("towertest: inner service broken")
	e.h.Allow(0)
	e.h.FailReady(broken)
	p, err := e.svc.Ready(t.Context())
	if err == nil {
		_, err = p.Call(t.Context(), s.Request)
	}
	if !errors.Is(err, broken) {
		t.Errorf("got error %v, want one that wraps the inner service's %q", err, broken)
	}
	if n := e.h.Calls(); n != 0 {
		t.Errorf("inner service got %d calls, want 0", n)
	}
}

type ctxKey struct{}

// callContext: the context given to Call reaches the inner service with its
// values, and its cancellation stops the call.
func (s LayerSuite[Req, Res]) callContext(t *testing.T, e *layerEnv[Req, Res]) {
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "value"))
	p := s.mustReady(t, t.Context(), e.svc)
	wait := call(ctx, &p, s.Request)
	synctest.Wait()
	r, ok := e.h.TryNext()
	if !ok {
		t.Fatal("the inner service received no request")
	}
	if got := r.Context().Value(ctxKey{}); got != "value" {
		t.Errorf("inner service's context has value %v, want %q", got, "value")
	}
	cancel()
	_, err := wait()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Call returned %v after its context was cancelled, want %v", err, context.Canceled)
	}
	if r.Context().Err() == nil {
		t.Error("cancelling the caller's context did not cancel the inner service's")
	}
}

// concurrentCallers: many callers share the service, each with its own
// reservation.
func (s LayerSuite[Req, Res]) concurrentCallers(t *testing.T, e *layerEnv[Req, Res]) {
	const callers = 8
	ctx, stop := context.WithCancel(t.Context())
	var responder sync.WaitGroup
	responder.Go(func() {
		for {
			r, err := e.h.Next(ctx)
			if err != nil {
				return
			}
			r.Respond(s.Response)
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			var res Res
			res, errs[i] = tower.Call(t.Context(), e.svc, s.Request)
			if errs[i] == nil && !s.Opaque && !reflect.DeepEqual(res, s.Response) {
				errs[i] = fmt.Errorf("got response %v, want %v", res, s.Response)
			}
		})
	}
	wg.Wait()
	stop()
	responder.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if n := e.h.Calls(); n != callers {
		t.Errorf("inner service got %d calls, want %d", n, callers)
	}
}

// mustPanicTower fails t unless f panics with a message that starts
// "tower:".
func mustPanicTower(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", what)
			return
		}
		if msg := fmt.Sprint(r); !strings.HasPrefix(msg, "tower:") {
			t.Errorf("%s panicked with %q, want a message that starts %q", what, msg, "tower:")
		}
	}()
	f()
}
