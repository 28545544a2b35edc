package towertest

import (
	"context"
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
	setup := func(t *testing.T) tower.Service[Req, Res] {
		svc := s.NewService()
		t.Cleanup(func() { closeIfCloser(t, svc) })
		return svc
	}
	runEach(t, setup, []suiteTest[tower.Service[Req, Res]]{
		{"ReadyWithDoneContextWhenFree", s.readyDoneCtx},
		{"ReleaseUnusedGivesCapacityBack", s.releaseUnused},
		{"SecondCallPanics", s.secondCallPanics},
		{"StaleCopyIsRefused", s.staleCopy},
		{"ConcurrentCallers", s.concurrentCallers},
	})
}

// judge returns the error Check finds in a call's outcome.
func (s ServiceSuite[Req, Res]) judge(res Res, err error) error {
	if s.Check != nil {
		return s.Check(res, err)
	}
	return err
}

// call calls p and fails t if judge finds an error.
func (s ServiceSuite[Req, Res]) call(t *testing.T, p *tower.Permit[Req, Res]) {
	t.Helper()
	if err := s.judge(p.Call(t.Context(), s.Request)); err != nil {
		t.Errorf("Call: %v", err)
	}
}

func (s ServiceSuite[Req, Res]) readyDoneCtx(t *testing.T, svc tower.Service[Req, Res]) {
	done, cancel := context.WithCancel(t.Context())
	cancel()
	p, err := svc.Ready(done)
	if err != nil {
		t.Fatalf("Ready with a done context on an idle service: %v, want a permit", err)
	}
	s.call(t, &p)
}

func (s ServiceSuite[Req, Res]) releaseUnused(t *testing.T, svc tower.Service[Req, Res]) {
	releaseUnused(t, svc, func(int) {})
}

func (s ServiceSuite[Req, Res]) secondCallPanics(t *testing.T, svc tower.Service[Req, Res]) {
	p := MustReady(t, svc)
	s.call(t, &p)
	p.Release()
	mustPanicTower(t, "second Call", func() { p.Call(t.Context(), s.Request) })
}

func (s ServiceSuite[Req, Res]) staleCopy(t *testing.T, svc tower.Service[Req, Res]) {
	if s.ReservesNothing {
		t.Skip("the service reserves nothing; its permits' copies are indistinguishable")
	}
	p := MustReady(t, svc)
	q := p
	p.Release()
	q.Release() // harmless
	mustPanicTower(t, "Call on a copy of a released permit", func() { q.Call(t.Context(), s.Request) })
}

func (s ServiceSuite[Req, Res]) concurrentCallers(t *testing.T, svc tower.Service[Req, Res]) {
	concurrentCallers(t, svc, s.Request, 8, s.judge)
}
