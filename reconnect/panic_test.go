package reconnect_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// faultyMaker is a maker whose Ready faults once readyFaults is set, and
// whose Call faults once callFaults is set, and otherwise makes the next
// service of made. Its Call waits for gate first.
type faultyMaker struct {
	fault                   func()
	readyFaults, callFaults atomic.Bool
	gate                    chan struct{}
	made                    chan svc
}

func newFaultyMaker(fault func()) *faultyMaker {
	gate := make(chan struct{})
	close(gate)
	return &faultyMaker{fault: fault, gate: gate, made: make(chan svc, 10)}
}

func (m *faultyMaker) Ready(ctx context.Context) (tower.Permit[string, svc], error) {
	if m.readyFaults.Load() {
		m.fault()
	}
	return reconnect.MakeFunc[string, string, string](m.make).Ready(ctx)
}

func (m *faultyMaker) make(context.Context, string) (svc, error) {
	<-m.gate
	if m.callFaults.Load() {
		m.fault()
	}
	return <-m.made, nil
}

// A panic in the maker's Ready, or runtime.Goexit, on the connect
// goroutine is the maker failing its readiness: the Reconnect is broken
// for good with the PanicError, which the caller waiting gets, and every
// later Ready too.
func TestMakerReadyFault(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newFaultyMaker(f.Do)
				m.readyFaults.Store(true)
				r := reconnect.New[string, string, string](m, target)
				defer r.Close()
				_, err := r.Ready(t.Context())
				pe := towertest.ExpectPanicError(t, err, "the maker's Ready, on a Reconnect's connect goroutine")
				f.Check(t, pe.Value)
				if errors.As(err, new(*reconnect.ConnectError)) {
					t.Errorf("Ready: got %v, want the PanicError itself, as for an error of the maker's Ready", err)
				}
				if _, err := r.Ready(t.Context()); err != error(pe) {
					t.Errorf("Ready after the fault: got %v, want the same PanicError", err)
				}
			})
		})
	}
}

// A panic in the maker's Call, or runtime.Goexit, is a failed connect: the
// callers waiting get a permit whose Call returns a *ConnectError that
// wraps the PanicError, and the next Ready connects again.
func TestMakerCallFault(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newFaultyMaker(f.Do)
				m.callFaults.Store(true)
				m.gate = make(chan struct{})
				r := reconnect.New[string, string, string](m, target)
				defer r.Close()
				a, b := towertest.GoReady(t.Context(), r), towertest.GoReady(t.Context(), r)
				close(m.gate)
				var first *tower.PanicError
				for _, rd := range []*towertest.Outcome[permit]{a, b} {
					rd.ExpectElapsed(t, 0)
					p := rd.Value(t)
					_, err := p.Call(t.Context(), "hello")
					if !errors.As(err, new(*reconnect.ConnectError)) {
						t.Errorf("Call: got %v, want a *ConnectError", err)
					}
					pe := towertest.ExpectPanicError(t, err, "the maker's Call, on a Reconnect's connect goroutine")
					f.Check(t, pe.Value)
					if first == nil {
						first = pe
					} else if pe != first {
						t.Error("the two callers got different PanicErrors, want the one of their connect")
					}
				}
				m.callFaults.Store(false)
				inner, h := towertest.NewMock[string, string]()
				m.made <- inner
				towertest.CallThrough(t, towertest.MustReady(t, r), h, "hello", "world")
			})
		})
	}
}

// A connect whose maker panics while nobody waits for it (the caller
// asked "ready now?" and left) is reported to the next caller, through
// its Call. The maker's Call waits at the gate until the caller has left:
// a connect that finished before the caller's "ready now?" had its answer
// would be that caller's, as Ready's doc says, and the goroutines run in
// parallel, so without the gate either may come first.
func TestMakerCallPanicNobodyWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newFaultyMaker(func() { panic(towertest.ExitValue) })
		m.callFaults.Store(true)
		m.gate = make(chan struct{})
		r := reconnect.New[string, string, string](m, target)
		defer r.Close()
		if _, ok := towertest.ReadyNow(t, r); ok {
			t.Fatal("ReadyNow: ready while the connect waits at the gate")
		}
		close(m.gate)
		synctest.Wait()
		p, ok := towertest.ReadyNow(t, r)
		if !ok {
			t.Fatal("ReadyNow: not ready, want the failed connect's permit")
		}
		_, err := p.Call(t.Context(), "hello")
		towertest.ExpectPanicError(t, err, "the maker's Call, on a Reconnect's connect goroutine")
	})
}

// faultyConn is a closable mock whose Ready faults once armed.
type faultyConn struct {
	*closable
	fault func()
	armed atomic.Bool
}

func (c *faultyConn) Ready(ctx context.Context) (permit, error) {
	if c.armed.CompareAndSwap(true, false) {
		c.fault()
	}
	return c.closable.Ready(ctx)
}

// A panic in the current service's Ready, or runtime.Goexit, on the
// caller's goroutine reaches that caller. It is the service failing its
// readiness: the Reconnect has dropped and closed it, and started a
// connect, by the time the panic leaves Ready; the next caller gets the
// new service. Nothing stays reserved.
func TestServiceReadyFaultOnCaller(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				old, oldH := newClosable()
				cur := &faultyConn{closable: old, fault: f.Do}
				maker, mh := towertest.NewMock[string, svc]()
				r := reconnect.NewConnected[string, string, string](maker, target, cur)
				defer r.Close()
				cur.armed.Store(true)
				var (
					wg       sync.WaitGroup
					returned bool
					raised   any
				)
				wg.Go(func() {
					defer func() { raised = recover() }()
					p, _ := r.Ready(t.Context())
					p.Release()
					returned = true
				})
				wg.Wait()
				if returned || (f.Name == "Panic" && raised != towertest.ExitValue) {
					t.Errorf("the caller's goroutine: returned %t, panicked with %v; want the fault to reach it", returned, raised)
				}
				if !old.isClosed() {
					t.Error("the service whose Ready panicked was not closed")
				}
				checkConnects(t, mh, 1)
				inner, h := towertest.NewMock[string, string]()
				connect(t, mh, inner)
				synctest.Wait()
				p, ok := towertest.ReadyNow(t, r)
				if !ok {
					t.Fatal("ReadyNow: not ready once the new service was made, want ready")
				}
				towertest.CallThrough(t, p, h, "hello", "world")
				if n := oldH.Outstanding(); n != 0 {
					t.Errorf("the old service has %d reservations outstanding, want 0", n)
				}
			})
		})
	}
}

// A panic that no caller is left to hear of is logged: in the maker's
// Call, or in the Close of the service it made, once the Reconnect has
// closed (Shutdown gave up waiting for a maker that ignores its ctx).
func TestPanicAfterCloseIsLogged(t *testing.T) {
	tests := []struct {
		name, where string
		arm         func(m *faultyMaker)
	}{
		{"MakerCall", "the maker's Call, on a Reconnect's connect goroutine", func(m *faultyMaker) {
			m.callFaults.Store(true)
		}},
		{"ServiceClose", "the Close of a service made after the Reconnect closed, on its connect goroutine", func(m *faultyMaker) {
			m.made <- panicsOnClose{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := towertest.CaptureLog(t)
				m := newFaultyMaker(func() { panic(towertest.ExitValue) })
				m.gate = make(chan struct{})
				tt.arm(m)
				r := reconnect.New[string, string, string](m, target)
				towertest.ReadyNow(t, r)
				synctest.Wait()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				if err := r.Shutdown(ctx); err != context.DeadlineExceeded {
					t.Fatalf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
				}
				close(m.gate)
				synctest.Wait()
				for _, want := range []string{"recovered a panic that no caller is left to hear of", tt.where, towertest.ExitValue.Error()} {
					if !strings.Contains(log.String(), want) {
						t.Errorf("the log does not say %q:\n%s", want, log.String())
					}
				}
				if _, err := r.Ready(t.Context()); err != reconnect.ErrClosed {
					t.Errorf("Ready: got %v, want %v", err, reconnect.ErrClosed)
				}
			})
		})
	}
}

// panicsOnClose is a service whose Close panics.
type panicsOnClose struct{ svc }

func (panicsOnClose) Close() error { panic(towertest.ExitValue) }
