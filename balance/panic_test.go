package balance_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/readycache"
	"github.com/towergo/tower/towertest"
)

// recovered calls f and returns what it panicked with, or nil.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// An endpoint whose next Ready panics while the balancer
// takes its permit (the cache asks it at once for its next reservation)
// is dropped and reported as a failure; the caller gets the permit it
// took, and the endpoint's ConcurrencyLimit(2) gets both its units back.
// Before the fix, the panic went up through Ready and the permit taken
// kept one unit of the limit for good.
func TestEndpointReadyPanicsWhileTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		lim := limit.NewConcurrency[string, string](m, 2)
		e := &errs{}
		bal := balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](lim), balance.WithErrorHandler(e.add))
		defer bal.Close()
		h.PanicReady("endpoint exploded") // the next Ready: the one the cache asks right after the take
		var p permit
		if v := recovered(func() { p = readySettled(t, bal) }); v != nil {
			t.Errorf("Ready panicked with %v, want the permit taken", v)
		}
		if p != (permit{}) {
			towertest.CallThrough(t, p, h, "x", "served")
		}
		synctest.Wait()
		if got := bal.Len(); got != 0 {
			t.Errorf("got Len() %d, want 0: the endpoint failed its readiness", got)
		}
		e.check(t, "*readycache.Failed[int]: tower: panic in an endpoint's Ready, asked by a ready cache on its caller's goroutine: endpoint exploded")
		for i := range 2 {
			q, ok, err := tower.ReadyNow[string, string](lim)
			if !ok || err != nil {
				t.Fatalf("the limit's unit %d: got ready %t, %v; want both units back", i+1, ok, err)
			}
			defer q.Release()
		}
	})
}

// The failure the error handler hears of carries the PanicError, with the
// panic's value and stack.
func TestEndpointReadyPanicReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep, h := constMock(-1, 0)
		var got error
		bal := balance.NewP2C(list(ep), balance.WithErrorHandler(func(err error) { got = err }))
		defer bal.Close()
		h.PanicReady("boom")
		p := readySettled(t, bal)
		p.Release()
		synctest.Wait()
		var f *readycache.Failed[int]
		var pe *tower.PanicError
		if !errors.As(got, &f) || !errors.As(got, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
			t.Fatalf("got report %v, want a *readycache.Failed of a *tower.PanicError of boom with a stack", got)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("mock has %d reservations outstanding, want 0", n)
		}
	})
}

// panicky is a Discover that answers from a channel, as scripted does, and
// panics (or calls runtime.Goexit) when it receives an answer with no
// change and the error errPanic (errGoexit).
type panicky scripted

var (
	errPanic  = errors.New("panic, please")
	errGoexit = errors.New("runtime.Goexit, please")
)

func (p panicky) Next(ctx context.Context) (discover.Change[int, endpoint], error) {
	ch, err := scripted(p).Next(ctx)
	switch err {
	case errPanic:
		panic("Next exploded")
	case errGoexit:
		runtime.Goexit()
	}
	return ch, err
}

// A panic (or a runtime.Goexit) in the Discover's Next on the balancer's
// goroutine is reported to the error handler as a DiscoverError of a
// PanicError, and ends the discovery: the balancer keeps the endpoints it
// has, as at io.EOF, and serves with them.
func TestDiscoverNextPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"Panic", errPanic, "Next exploded"},
		{"Goexit", errGoexit, "runtime.Goexit was called"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := &errs{}
				d := make(scripted)
				bal := balance.NewP2C(panicky(d), balance.WithErrorHandler(e.add))
				defer bal.Close()
				a, ha := constMock(-1, 0)
				d <- insert(1, a)
				d <- answer{err: tt.err}
				synctest.Wait()
				select {
				case d <- insert(2, a):
					t.Error("the balancer asked the Discover for more after its panic")
				default:
				}
				e.check(t, "*balance.DiscoverError: load balancer discovery error: tower: panic in the Discover's Next, on a balancer's discovery goroutine: "+tt.want)
				if got := callWhich(t, readySettled(t, bal), "x", map[string]*handle{"a": ha}); got != "a" {
					t.Errorf("after the panic: request went to %s, want a", got)
				}
				if pe := e.lastPanic(); pe == nil || len(pe.Stack) == 0 {
					t.Errorf("the report carries %v, want a PanicError with a stack", pe)
				}
			})
		})
	}
}

// A panic in the Discover's Next while the balancer is built goes up to
// the constructor's caller, once the endpoints taken in before it have been
// released and handed to the removal handler; nothing is left running.
func TestDiscoverNextPanicsWhileBuilt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var removed []int
		d := make(scripted, 2)
		a, ha := constMock(-1, 0)
		d <- insert(1, a)
		d <- answer{err: errPanic}
		towertest.Panics(t, "Next exploded", func() {
			balance.NewP2C(panicky(d), balance.WithRemovalHandler(func(k int, _ endpoint) { removed = append(removed, k) }))
		})
		if n := ha.Outstanding(); n != 0 || len(removed) != 1 {
			t.Errorf("got %d reservations outstanding and removals %v, want 0 and [1]", n, removed)
		}
	})
}

// A panic in a handler on the balancer's discovery goroutine is logged, and
// the discovery goes on: here the error handler, for a report, and the
// removal handler, for an endpoint replaced.
func TestHandlerPanicsOnDiscoveryGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := towertest.CaptureLog(t)
		d := make(scripted)
		a, _ := constMock(-1, 0)
		b, hb := constMock(-1, 0)
		bal := balance.NewP2C(d,
			balance.WithErrorHandler(func(error) { panic("error handler exploded") }),
			balance.WithRemovalHandler(func(k int, svc endpoint) {
				if k == 1 && svc == a {
					panic("removal handler exploded")
				}
			}))
		defer bal.Close()
		d <- answer{err: errors.New("lookup failed")}
		d <- insert(1, a)
		d <- insert(1, b) // replaces a
		d <- insert(2, a)
		synctest.Wait()
		for _, want := range []string{"error handler exploded", "removal handler exploded", "on a balancer's discovery goroutine"} {
			if !strings.Contains(l.String(), want) {
				t.Errorf("the log does not say %q; got:\n%s", want, l.String())
			}
		}
		if got := bal.Len(); got != 2 {
			t.Errorf("got Len() %d, want 2: the discovery went on", got)
		}
		if n := hb.Outstanding(); n != 1 {
			t.Errorf("b has %d reservations outstanding, want the 1 the balancer holds", n)
		}
	})
}

// A panic in the error handler called on a caller's goroutine, for an
// endpoint that broke as its permit was taken, goes up to that caller,
// which never gets the permit: it is released.
func TestErrorHandlerPanicsOnCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := constMock(-1, 0)
		bal := balance.NewP2C(list(a), balance.WithErrorHandler(func(error) { panic("error handler exploded") }))
		defer bal.Close()
		ha.FailReady(errors.New("broken"))
		towertest.Panics(t, "error handler exploded", func() { bal.Ready(t.Context()) })
		if n := ha.Outstanding(); n != 0 || bal.Len() != 0 {
			t.Errorf("got %d reservations outstanding, Len() %d; want 0, 0", n, bal.Len())
		}
	})
}

// loadPanics is an endpoint whose Load panics while panics is set.
type loadPanics struct {
	endpoint
	panics *bool
}

func (l loadPanics) Load() float64 {
	if *l.panics {
		panic("Load exploded")
	}
	return 0
}

// randPanics is a Rand that panics while panics is set.
type randPanics struct{ panics *bool }

func (r randPanics) IntN(n int) int {
	if *r.panics {
		panic("Rand exploded")
	}
	return 0
}

// A panic in an endpoint's Load or in the Rand, which P2C calls on the
// caller's goroutine with the cache's lock held, goes up to the caller with
// the lock released and nothing taken: the next Ready is served.
func TestP2CPickPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		want string
		make func(eps []endpoint, panics *bool) *balance.P2C[int, string, string]
	}{
		{"Load", "Load exploded", func(eps []endpoint, panics *bool) *balance.P2C[int, string, string] {
			return balance.NewP2C(list(loadPanics{eps[0], panics}, loadPanics{eps[1], panics}))
		}},
		{"Rand", "Rand exploded", func(eps []endpoint, panics *bool) *balance.P2C[int, string, string] {
			return balance.NewP2C(list(eps...), balance.WithRand(randPanics{panics}))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, ha := constMock(-1, 0)
				b, hb := constMock(-1, 0)
				panics := true
				bal := tt.make([]endpoint{a, b}, &panics)
				defer bal.Close()
				towertest.Panics(t, tt.want, func() { bal.Ready(t.Context()) })
				if na, nb := ha.Outstanding(), hb.Outstanding(); na != 1 || nb != 1 || bal.ReadyLen() != 2 {
					t.Errorf("got %d and %d reservations outstanding, ReadyLen() %d; want 1, 1 (the balancer's), 2", na, nb, bal.ReadyLen())
				}
				panics = false
				callWhich(t, readySettled(t, bal), "x", map[string]*handle{"a": ha, "b": hb})
			})
		})
	}
}
