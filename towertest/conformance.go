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
	runEach(t, s.setup, []suiteTest[*layerEnv[Req, Res]]{
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
	})
}

type suiteTest[E any] struct {
	name string
	test func(*testing.T, E)
}

// runEach runs each test as a subtest of t, in a testing/synctest bubble of
// its own, on what setup returns.
func runEach[E any](t *testing.T, setup func(*testing.T) E, tests []suiteTest[E]) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { tt.test(t, setup(t)) })
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

// roundTrip calls p on a goroutine of its own, answers the request the
// mock must have received by then with the suite's response, and checks
// what the caller gets.
func (s LayerSuite[Req, Res]) roundTrip(t *testing.T, e *layerEnv[Req, Res], p *tower.Permit[Req, Res]) {
	t.Helper()
	o := Go(func() (Res, error) { return p.Call(t.Context(), s.Request) })
	synctest.Wait()
	r, ok := e.h.TryNext()
	if !ok {
		t.Fatal("the inner service received no request")
	}
	if !s.Opaque && !reflect.DeepEqual(r.Value, s.Request) {
		t.Errorf("inner service got request %v, want %v", r.Value, s.Request)
	}
	r.Respond(s.Response)
	res, err := o.Wait()
	s.checkResponse(t, res, err)
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

// expectCalls fails t unless the inner service got n calls.
func expectCalls[Req, Res any](t *testing.T, h *Handle[Req, Res], n int) {
	t.Helper()
	if got := h.Calls(); got != n {
		t.Errorf("inner service got %d calls, want %d", got, n)
	}
}

func (s LayerSuite[Req, Res]) callAnswers(t *testing.T, e *layerEnv[Req, Res]) {
	p := s.mustReady(t, t.Context(), e.svc)
	s.roundTrip(t, e, &p)
	expectCalls(t, e.h, 1)
}

func (s LayerSuite[Req, Res]) readyDoneCtx(t *testing.T, e *layerEnv[Req, Res]) {
	done, cancel := context.WithCancel(t.Context())
	cancel()
	p := s.mustReady(t, done, e.svc)
	s.roundTrip(t, e, &p)
}

// releaseUnused: a permit released unused, twice, gives back everything,
// round after round, and never reaches the inner service's call.
func (s LayerSuite[Req, Res]) releaseUnused(t *testing.T, e *layerEnv[Req, Res]) {
	releaseUnused(t, e.svc, func(round int) {
		if n := e.h.Outstanding(); n != 0 {
			t.Fatalf("round %d: inner service has %d reservations outstanding after Release, want 0", round, n)
		}
	})
	synctest.Wait()
	expectCalls(t, e.h, 0)
}

// releaseUnused gets a permit with ReadyNow and releases it twice, ten
// times, calling after(round) each time.
func releaseUnused[Req, Res any](t *testing.T, svc tower.Service[Req, Res], after func(round int)) {
	t.Helper()
	for i := range 10 {
		p, ok, err := tower.ReadyNow(svc)
		if err != nil || !ok {
			t.Fatalf("round %d: ReadyNow = %v, %v; want a permit: capacity released unused must be free again", i, ok, err)
		}
		p.Release()
		p.Release()
		after(i)
	}
}

// secondCallPanics: calling a permit again panics, and releasing it after
// the call does nothing.
func (s LayerSuite[Req, Res]) secondCallPanics(t *testing.T, e *layerEnv[Req, Res]) {
	p := s.mustReady(t, t.Context(), e.svc)
	s.roundTrip(t, e, &p)
	p.Release()
	mustPanicTower(t, "second Call", func() { p.Call(t.Context(), s.Request) })
	expectCalls(t, e.h, 1)
}

// staleCopy: once a permit is used through one copy, the other copies'
// Call panics and their Release does nothing, neither in the inner service
// nor in the layer's own capacity.
func (s LayerSuite[Req, Res]) staleCopy(t *testing.T, e *layerEnv[Req, Res]) {
	p := s.mustReady(t, t.Context(), e.svc)
	q, r := p, p
	s.roundTrip(t, e, &p)
	// Measured after the call, which may use capacity up for good (a place
	// in a rate window).
	before := capacity(e.svc)
	q.Release()
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("a stale copy's Release reached the inner service: %d reservations outstanding, want 0", n)
	}
	mustPanicTower(t, "Call on a stale copy", func() { r.Call(t.Context(), s.Request) })
	if after := capacity(e.svc); after != before {
		t.Errorf("the layer grants %d reservations at once after a called permit's stale copies were used, %d before: a stale copy gave capacity back twice", after, before)
	}

	// Released through one copy, called and released through others.
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
	expectCalls(t, e.h, 1)
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

// ctxEndsWhileWaiting: the inner service is not ready, and the caller's
// context ends while it waits, in Ready or in Call. The caller gets its
// context's error, nothing reaches the inner service, nothing stays
// reserved, and once the inner service is ready, requests go through.
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
	expectCalls(t, e.h, 0)
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding, want 0", n)
	}

	e.h.AllowAll()
	p := s.mustReady(t, t.Context(), e.svc)
	s.roundTrip(t, e, &p)
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
	expectCalls(t, e.h, 0)
}

type ctxKey struct{}

// callContext: the context given to Call reaches the inner service with its
// values, and its cancellation stops the call.
func (s LayerSuite[Req, Res]) callContext(t *testing.T, e *layerEnv[Req, Res]) {
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "value"))
	p := s.mustReady(t, t.Context(), e.svc)
	o := Go(func() (Res, error) { return p.Call(ctx, s.Request) })
	synctest.Wait()
	r, ok := e.h.TryNext()
	if !ok {
		t.Fatal("the inner service received no request")
	}
	if got := r.Context().Value(ctxKey{}); got != "value" {
		t.Errorf("inner service's context has value %v, want %q", got, "value")
	}
	cancel()
	if _, err := o.Wait(); !errors.Is(err, context.Canceled) {
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
	concurrentCallers(t, e.svc, s.Request, callers, func(res Res, err error) error {
		if err == nil && !s.Opaque && !reflect.DeepEqual(res, s.Response) {
			err = fmt.Errorf("got response %v, want %v", res, s.Response)
		}
		return err
	})
	stop()
	responder.Wait()
	expectCalls(t, e.h, callers)
}

// concurrentCallers sends req through svc from n goroutines at once, and
// fails t for each outcome check does not pass.
func concurrentCallers[Req, Res any](t *testing.T, svc tower.Service[Req, Res], req Req, n int, check func(Res, error) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = check(tower.Call(t.Context(), svc, req)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
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
