package towertest

import (
	"context"
	"testing"
	"testing/synctest"

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
	tests := []struct {
		name string
		test func(*testing.T, tower.Service[Req, Res])
	}{
		{"ReadyWithDoneContextWhenFree", s.readyDoneCtx},
		{"ReleaseUnusedGivesCapacityBack", s.releaseUnused},
		{"SecondCallPanics", s.secondCallPanics},
		{"StaleCopyIsRefused", s.staleCopy},
		{"ConcurrentCallers", s.concurrentCallers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc := s.NewService()
				t.Cleanup(func() { closeIfCloser(t, svc) })
				tt.test(t, svc)
			})
		})
	}
}

func (s ServiceSuite[Req, Res]) check(t *testing.T, res Res, err error) {
	t.Helper()
	if s.Check != nil {
		err = s.Check(res, err)
	}
	if err != nil {
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
	res, err := p.Call(t.Context(), s.Request)
	s.check(t, res, err)
}

func (s ServiceSuite[Req, Res]) releaseUnused(t *testing.T, svc tower.Service[Req, Res]) {
	for i := range 10 {
		p, ok, err := tower.ReadyNow(svc)
		if err != nil || !ok {
			t.Fatalf("round %d: ReadyNow = %v, %v; want a permit: capacity released unused must be free again", i, ok, err)
		}
		p.Release()
		p.Release()
	}
}

func (s ServiceSuite[Req, Res]) secondCallPanics(t *testing.T, svc tower.Service[Req, Res]) {
	p, err := svc.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	res, err := p.Call(t.Context(), s.Request)
	s.check(t, res, err)
	p.Release()
	mustPanicTower(t, "second Call", func() { p.Call(t.Context(), s.Request) })
}

func (s ServiceSuite[Req, Res]) staleCopy(t *testing.T, svc tower.Service[Req, Res]) {
	if s.ReservesNothing {
		t.Skip("the service reserves nothing; its permits' copies are indistinguishable")
	}
	p, err := svc.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	q := p
	p.Release()
	q.Release() // harmless
	mustPanicTower(t, "Call on a copy of a released permit", func() { q.Call(t.Context(), s.Request) })
}

func (s ServiceSuite[Req, Res]) concurrentCallers(t *testing.T, svc tower.Service[Req, Res]) {
	const callers = 8
	done := make(chan struct{})
	for range callers {
		go func() {
			defer func() { done <- struct{}{} }()
			res, err := tower.Call(t.Context(), svc, s.Request)
			s.check(t, res, err)
		}()
	}
	for range callers {
		<-done
	}
}
