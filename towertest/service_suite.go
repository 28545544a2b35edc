package towertest

import (
	"testing"

	"github.com/towergo/tower"
)

// ServiceSuite is the conformance suite for a [tower.Service] that answers
// on its own, without an inner service the suite could control: a leaf
// service, or a stack over one. It checks the parts of the readiness
// contract that need no control over readiness. Every test runs in its own
// testing/synctest bubble, so a goroutine the service leaves behind fails it.
type ServiceSuite[Req, Res any] struct {
	// NewService returns a fresh, idle service for each test. If it has a
	// Close method, the suite calls it when the test ends.
	NewService func() tower.Service[Req, Res]
	// Request is what the tests send.
	Request Req
	// Check, if set, judges each call's outcome; the default wants a nil
	// error.
	Check func(res Res, err error) error
	// ReservesNothing says that the service's permits hold nothing, like a
	// ServiceFunc's, so a stale copy of one cannot be told from the
	// original and is not expected to panic.
	ReservesNothing bool
}

// Run runs the suite as subtests of t.
func (s ServiceSuite[Req, Res]) Run(t *testing.T) {
	if s.NewService == nil {
		t.Fatal("towertest.ServiceSuite: NewService is nil")
	}
	judge := s.Check
	if judge == nil {
		judge = func(_ Res, err error) error { return err }
	}
	setup := func(t *testing.T) *env[Req, Res] {
		svc := s.NewService()
		t.Cleanup(func() { closeIfCloser(t, svc) })
		return &env[Req, Res]{svc: svc, req: s.Request, judge: judge}
	}
	type E = env[Req, Res]
	runEach(t, setup, []suiteTest[Req, Res]{
		{"ReadyWithDoneContextWhenFree", (*E).readyDoneCtx},
		{"ReleaseUnusedGivesCapacityBack", (*E).releaseUnused},
		{"SecondCallPanics", (*E).secondCallPanics},
		{"StaleCopyIsRefused", s.staleCopy},
		{"ConcurrentCallers", (*E).concurrentCallers},
	})
}

func (s ServiceSuite[Req, Res]) staleCopy(e *env[Req, Res], t *testing.T) {
	if s.ReservesNothing {
		t.Skip("the service reserves nothing; its permits' copies are indistinguishable")
	}
	p := MustReady(t, e.svc)
	q := p
	p.Release()
	q.Release() // harmless
	mustPanicTower(t, "Call on a copy of a released permit", func() { q.Call(t.Context(), e.req) })
}
