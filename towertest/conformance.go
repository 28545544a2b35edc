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
	type E = env[Req, Res]
	runEach(t, s.setup, []suiteTest[Req, Res]{
		{"CallReachesInnerAndAnswers", (*E).callAnswers},
		{"ReadyWithDoneContextWhenFree", (*E).readyDoneCtx},
		{"ReleaseUnusedGivesCapacityBack", (*E).releaseUnused},
		{"SecondCallPanics", (*E).secondCallPanics},
		{"StaleCopyIsRefused", (*E).staleCopy},
		{"ContextEndsWhileWaiting", (*E).ctxEndsWhileWaiting},
		{"InnerReadyFailure", (*E).innerReadyFailure},
		{"CallContextReachesInner", (*E).callContext},
		{"ConcurrentCallers", (*E).concurrentCallers},
		{"InnerReadyPanicsAtOnce", func(e *E, t *testing.T) { e.readyPanics(t, false) }},
		{"InnerReadyPanicsWhileWaited", func(e *E, t *testing.T) { e.readyPanics(t, true) }},
		{"InnerCallPanics", (*E).callPanics},
	})
}

func (s LayerSuite[Req, Res]) setup(t *testing.T) *env[Req, Res] {
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
	return &env[Req, Res]{svc: svc, h: h, req: s.Request, res: s.Response, opaque: s.Opaque,
		judge: func(res Res, err error) error {
			if err == nil && !s.Opaque && !reflect.DeepEqual(res, s.Response) {
				return fmt.Errorf("got response %v, want %v", res, s.Response)
			}
			return err
		}}
}

// env is what a test of either suite runs on.
type env[Req, Res any] struct {
	svc    tower.Service[Req, Res]
	h      *Handle[Req, Res] // the mock under a LayerSuite's layer; nil in a ServiceSuite
	req    Req
	res    Res  // what the mock answers
	opaque bool // the layer changes requests: do not compare the mock's with req
	judge  func(Res, error) error
}

type suiteTest[Req, Res any] struct {
	name string
	test func(*env[Req, Res], *testing.T)
}

// runEach runs each test as a subtest of t, in a testing/synctest bubble of
// its own, on what setup returns.
func runEach[Req, Res any](t *testing.T, setup func(*testing.T) *env[Req, Res], tests []suiteTest[Req, Res]) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { tt.test(setup(t), t) })
		})
	}
}

func closeIfCloser(t *testing.T, v any) {
	if c, ok := v.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// call calls p and fails t unless judge passes the outcome. With a mock,
// the request must have reached it once the call has gone as far as it
// can, and the mock answers it.
func (e *env[Req, Res]) call(t *testing.T, p *tower.Permit[Req, Res]) {
	t.Helper()
	var err error
	if e.h == nil {
		err = e.judge(p.Call(t.Context(), e.req))
	} else {
		o, r := e.send(t, t.Context(), p)
		if !e.opaque && !reflect.DeepEqual(r.Value, e.req) {
			t.Errorf("inner service got request %v, want %v", r.Value, e.req)
		}
		r.Respond(e.res)
		err = e.judge(o.Wait())
	}
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
}

// send calls p with ctx on a goroutine of its own, and returns the call
// and the request the mock must have received once it has gone as far as
// it can.
func (e *env[Req, Res]) send(t *testing.T, ctx context.Context, p *tower.Permit[Req, Res]) (*Outcome[Res], *Request[Req, Res]) {
	t.Helper()
	o := Go(func() (Res, error) { return p.Call(ctx, e.req) })
	synctest.Wait()
	r, ok := e.h.TryNext()
	if !ok {
		t.Fatal("the inner service received no request")
	}
	return o, r
}

func (e *env[Req, Res]) mustReady(t *testing.T, ctx context.Context) tower.Permit[Req, Res] {
	t.Helper()
	p, err := e.svc.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if !p.Held() {
		t.Fatal("Ready returned no error and an empty permit")
	}
	return p
}

// idle fails t unless the mock, if there is one, got calls requests in all
// and holds no reservation.
func (e *env[Req, Res]) idle(t *testing.T, calls int) {
	t.Helper()
	if e.h != nil {
		e.h.ExpectIdle(t, calls)
	}
}

func (e *env[Req, Res]) callAnswers(t *testing.T) {
	p := e.mustReady(t, t.Context())
	e.call(t, &p)
	e.idle(t, 1)
}

func (e *env[Req, Res]) readyDoneCtx(t *testing.T) {
	done, cancel := context.WithCancel(t.Context())
	cancel()
	p := e.mustReady(t, done)
	e.call(t, &p)
}

// releaseUnused: a permit released unused, twice, gives back everything,
// round after round, and never reaches the inner service's call.
func (e *env[Req, Res]) releaseUnused(t *testing.T) {
	for i := range 10 {
		p, ok, err := tower.ReadyNow(e.svc)
		if err != nil || !ok {
			t.Fatalf("round %d: ReadyNow = %v, %v; want a permit: capacity released unused must be free again", i, ok, err)
		}
		p.Release()
		p.Release()
		if e.h == nil {
			continue
		}
		if n := e.h.Outstanding(); n != 0 {
			t.Fatalf("round %d: inner service has %d reservations outstanding after Release, want 0", i, n)
		}
	}
	e.idle(t, 0)
}

// secondCallPanics: calling a permit again panics, and releasing it after
// the call does nothing.
func (e *env[Req, Res]) secondCallPanics(t *testing.T) {
	p := e.mustReady(t, t.Context())
	e.call(t, &p)
	p.Release()
	mustPanicTower(t, "second Call", func() { p.Call(t.Context(), e.req) })
	e.idle(t, 1)
}

// staleCopy: once a permit is used through one copy, the other copies'
// Call panics and their Release does nothing, neither in the inner service
// nor in the layer's own capacity.
func (e *env[Req, Res]) staleCopy(t *testing.T) {
	p := e.mustReady(t, t.Context())
	q, r := p, p
	e.call(t, &p)
	// Measured after the call, which may use capacity up for good (a place
	// in a rate window).
	before := capacity(e.svc)
	q.Release()
	if n := e.h.Outstanding(); n != 0 {
		t.Errorf("a stale copy's Release reached the inner service: %d reservations outstanding, want 0", n)
	}
	mustPanicTower(t, "Call on a stale copy", func() { r.Call(t.Context(), e.req) })
	if after := capacity(e.svc); after != before {
		t.Errorf("the layer grants %d reservations at once after a called permit's stale copies were used, %d before: a stale copy gave capacity back twice", after, before)
	}

	// Released through one copy, called and released through others.
	p = e.mustReady(t, t.Context())
	q, r = p, p
	p.Release()
	before = capacity(e.svc)
	mustPanicTower(t, "Call on a copy of a released permit", func() { q.Call(t.Context(), e.req) })
	r.Release()
	if after := capacity(e.svc); after != before {
		t.Errorf("the layer grants %d reservations at once after a released permit's stale copies were used, %d before: a stale copy gave capacity back twice", after, before)
	}
	e.idle(t, 1)
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
func (e *env[Req, Res]) ctxEndsWhileWaiting(t *testing.T) {
	e.h.Allow(0)
	ctx, cancel := context.WithCancel(t.Context())
	var (
		readyErr, callErr error
		wg                sync.WaitGroup
	)
	wg.Go(func() {
		p, err := e.svc.Ready(ctx)
		if readyErr = err; err != nil {
			return
		}
		_, callErr = p.Call(ctx, e.req)
	})
	synctest.Wait()
	cancel()
	wg.Wait()
	if readyErr != nil {
		if readyErr != ctx.Err() {
			t.Errorf("Ready returned %v, want ctx.Err() unchanged (%v)", readyErr, ctx.Err())
		}
	} else if callErr == nil {
		t.Error("Call succeeded although the inner service never became ready")
	}
	e.idle(t, 0)

	e.h.AllowAll()
	p := e.mustReady(t, t.Context())
	e.call(t, &p)
}

// innerReadyFailure: an inner service that fails readiness makes the layer
// fail with that error, in Ready or, for a layer that queues, in Call.
func (e *env[Req, Res]) innerReadyFailure(t *testing.T) {
	broken := errors.New("towertest: inner service broken")
	e.h.Allow(0)
	e.h.FailReady(broken)
	p, err := e.svc.Ready(t.Context())
	if err == nil {
		_, err = p.Call(t.Context(), e.req)
	}
	if !errors.Is(err, broken) {
		t.Errorf("got error %v, want one that wraps the inner service's %q", err, broken)
	}
	e.idle(t, 0)
}

type ctxKey struct{}

// callContext: the context given to Call reaches the inner service with its
// values, and its cancellation stops the call.
func (e *env[Req, Res]) callContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "value"))
	p := e.mustReady(t, t.Context())
	o, r := e.send(t, ctx, &p)
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
func (e *env[Req, Res]) concurrentCallers(t *testing.T) {
	const callers = 8
	ctx, stop := context.WithCancel(t.Context())
	var responder, wg sync.WaitGroup
	if e.h != nil {
		responder.Go(func() {
			for {
				r, err := e.h.Next(ctx)
				if err != nil {
					return
				}
				r.Respond(e.res)
			}
		})
	}
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { errs[i] = e.judge(tower.Call(t.Context(), e.svc, e.req)) })
	}
	wg.Wait()
	stop()
	responder.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	e.idle(t, callers)
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
