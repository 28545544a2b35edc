package balance_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

// named answers with its name at once.
func named(name string) tower.Service[string, string] {
	return tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return name, nil })
}

// RoundRobin takes always-ready endpoints in turn.
func TestRoundRobinOrder(t *testing.T) {
	bal := balance.NewRoundRobin(discover.NewList(named("a"), named("b"), named("c")))
	defer bal.Close()
	var got []string
	for range 7 {
		res, err := tower.Call(t.Context(), bal, "x")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res)
	}
	if want := "[a b c a b c a]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// RoundRobin skips an endpoint that is not ready.
func TestRoundRobinSkipsNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, ha := towertest.NewMock[string, string]()
		b, hb := towertest.NewMock[string, string]()
		ha.Allow(0)
		bal := balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](a, b))
		defer bal.Close()
		handles := map[string]*handle{"a": ha, "b": hb}
		for i := range 3 {
			if got := callWhich(t, readySettled(t, bal), "x", handles); got != "b" {
				t.Errorf("request %d: got %s, want b, the only ready endpoint", i, got)
			}
		}
	})
}

// The endpoints of a List are in place when the constructor returns.
func TestListAppliedAtConstruction(t *testing.T) {
	bal := balance.NewP2C(list(load.NewConstant(named("a"), 0), load.NewConstant(named("b"), 0)))
	defer bal.Close()
	if got := bal.ReadyLen(); got != 2 {
		t.Errorf("got ReadyLen() %d right after NewP2C, want 2", got)
	}
	if _, ok, _ := tower.ReadyNow(bal); !ok {
		t.Error("ReadyNow right after NewP2C: got not ready, want ready")
	}
}

// WithFailFast: no endpoints means a request fails at once with
// ErrNoEndpoints, from Call; Ready does not fail, even with a done context.
func TestFailFastEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bal := balance.NewP2C(list(), balance.WithFailFast())
		defer bal.Close()
		start := time.Now()
		p := towertest.MustReady(t, bal)
		if _, err := p.Call(t.Context(), "x"); err != balance.ErrNoEndpoints {
			t.Errorf("Call: got %v, want %v", err, balance.ErrNoEndpoints)
		}
		if _, err := tower.Call(t.Context(), bal, "x"); err != balance.ErrNoEndpoints {
			t.Errorf("tower.Call: got %v, want %v", err, balance.ErrNoEndpoints)
		}
		if _, ok, err := tower.ReadyNow(bal); !ok || err != nil {
			t.Errorf("ReadyNow: got %t, %v; want the failing permit", ok, err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("failing fast took %v, want 0", got)
		}
	})
}

// WithFailFast: requests wait while the Discover has not answered yet, and
// while there is an endpoint, ready or not; they fail when the last one is
// removed, those waiting included.
func TestFailFastFollowsDiscovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := make(scripted)
		bal := balance.NewP2C(d, balance.WithFailFast())
		defer bal.Close()
		start := time.Now()
		call := towertest.GoRequest(t.Context(), bal, "x")
		call.ExpectPending(t) // the Discover has not answered
		time.Sleep(10 * time.Millisecond)
		ep, _ := constMock(0, 0) // never ready
		d <- insert(1, ep)
		call.ExpectPending(t) // an endpoint is pending
		time.Sleep(10 * time.Millisecond)
		d <- remove(1)
		if _, err := call.Wait(); err != balance.ErrNoEndpoints {
			t.Errorf("waiting request: got %v, want %v", err, balance.ErrNoEndpoints)
		}
		if got := time.Since(start); got != 20*time.Millisecond {
			t.Errorf("it failed at %v, want 20ms, when the last endpoint was removed", got)
		}
		// A Discover that answers with an error has answered.
		d2 := make(scripted, 1)
		d2 <- answer{err: errors.New("lookup failed")}
		bal2 := balance.NewP2C(d2, balance.WithFailFast())
		defer bal2.Close()
		if _, err := tower.Call(t.Context(), bal2, "x"); err != balance.ErrNoEndpoints {
			t.Errorf("after a Discover error: got %v, want %v", err, balance.ErrNoEndpoints)
		}
	})
}

// Without WithFailFast, Ready waits for an endpoint and returns when one is
// inserted.
func TestWaitsForInsert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := make(scripted)
		bal := balance.NewP2C(d)
		defer bal.Close()
		start := time.Now()
		go func() {
			time.Sleep(30 * time.Millisecond)
			d <- insert(1, load.NewConstant(named("a"), 0))
		}()
		res, err := tower.Call(t.Context(), bal, "x")
		if err != nil || res != "a" {
			t.Fatalf("Call: got %q, %v; want %q, nil", res, err, "a")
		}
		if got := time.Since(start); got != 30*time.Millisecond {
			t.Errorf("answered at %v, want 30ms", got)
		}
	})
}

// Ready returns ctx.Err() unchanged when its context ends first.
func TestReadyContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep, h := constMock(0, 0)
		bal := balance.NewP2C(list(ep))
		defer bal.Close()
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(15 * time.Millisecond)
			cancel()
		}()
		start := time.Now()
		if _, err := bal.Ready(ctx); err != context.Canceled {
			t.Fatalf("Ready: got %v, want %v", err, context.Canceled)
		}
		if got := time.Since(start); got != 15*time.Millisecond {
			t.Errorf("Ready gave up at %v, want 15ms", got)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("mock has %d reservations outstanding, want 0", n)
		}
	})
}

// Changes from the Discover are applied in order: a Remove gives back the
// reservation the endpoint held; an Insert of a key in the set replaces
// its endpoint; errors, nil services and unknown kinds are reported and
// change nothing; after the end of the stream the set stays.
func TestDiscoverChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &errs{}
		d := make(scripted)
		bal := balance.NewP2C(d, balance.WithErrorHandler(e.add))
		defer bal.Close()
		a, ha := constMock(-1, 0)
		b, hb := constMock(-1, 0)
		handles := map[string]*handle{"a": ha, "b": hb}

		d <- insert(1, a)
		synctest.Wait()
		if n := ha.Outstanding(); bal.ReadyLen() != 1 || n != 1 {
			t.Fatalf("after Insert(1, a): got ReadyLen() %d, a's reservations %d; want 1, 1", bal.ReadyLen(), n)
		}
		d <- insert(1, b) // replaces a
		synctest.Wait()
		if n := ha.Outstanding(); bal.Len() != 1 || n != 0 {
			t.Fatalf("after Insert(1, b): got Len() %d, a's reservations %d; want 1, 0", bal.Len(), n)
		}
		if got := callWhich(t, readySettled(t, bal), "x", handles); got != "b" {
			t.Errorf("after the replacement: request went to %s, want b", got)
		}

		d <- answer{err: errors.New("lookup failed")}
		d <- answer{ch: discover.Change[int, endpoint]{Kind: discover.Insert, Key: 2}}
		d <- answer{ch: discover.Change[int, endpoint]{Kind: 9, Key: 3}}
		d <- remove(7) // not in the set: ignored
		synctest.Wait()
		if bal.Len() != 1 {
			t.Fatalf("after reports: got Len() %d, want 1", bal.Len())
		}
		d <- remove(1)
		synctest.Wait()
		if n := hb.Outstanding(); bal.Len() != 0 || n != 0 {
			t.Fatalf("after Remove(1): got Len() %d, b's reservations %d; want 0, 0", bal.Len(), n)
		}
		d <- insert(1, a) // a key may be used again
		d <- answer{err: io.EOF}
		synctest.Wait()
		if got := callWhich(t, readySettled(t, bal), "x", handles); got != "a" {
			t.Errorf("after the end of the stream: request went to %s, want a", got)
		}
		e.check(t,
			"*balance.DiscoverError: load balancer discovery error: lookup failed",
			"*balance.DiscoverError: load balancer discovery error: insert of key 2 with a nil service",
			"*balance.DiscoverError: load balancer discovery error: change of key 3 has unknown kind Kind(9)",
		)
	})
}

// Close stops the Discover's goroutine and the endpoints' goroutines,
// gives back the ready endpoints' reservations, and wakes those waiting in
// Ready with ErrClosed; a permit taken before stays good.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := make(scripted)
		bal := balance.NewP2C(d)
		a, ha := constMock(1, 0)
		p, hp := constMock(0, 0)
		d <- insert(1, a)
		d <- insert(2, p)
		synctest.Wait()
		taken := readySettled(t, bal) // a's one reservation; a goes pending
		waiting := towertest.GoReady(t.Context(), bal)
		time.Sleep(5 * time.Millisecond)
		if err := bal.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := waiting.Wait(); err != balance.ErrClosed {
			t.Errorf("waiting Ready: got %v, want %v", err, balance.ErrClosed)
		}
		if _, err := bal.Ready(t.Context()); err != balance.ErrClosed {
			t.Errorf("Ready after Close: got %v, want %v", err, balance.ErrClosed)
		}
		if n := hp.Outstanding(); n != 0 {
			t.Errorf("pending endpoint has %d reservations outstanding, want 0", n)
		}
		if got := callWhich(t, taken, "x", map[string]*handle{"a": ha}); got != "a" {
			t.Errorf("the permit taken before Close went to %s, want a", got)
		}
		if n := ha.Outstanding(); n != 0 {
			t.Errorf("a has %d reservations outstanding, want 0", n)
		}
		if err := bal.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestDiscoverErrorType(t *testing.T) {
	inner := errors.New("no such host")
	err := &balance.DiscoverError{Err: inner}
	if err.Error() != "load balancer discovery error: no such host" || !errors.Is(err, inner) {
		t.Errorf("got %q, Is(inner) %t; want tower's message and true", err.Error(), errors.Is(err, inner))
	}
}

// scriptedPtrNil is a typed nil Discover.
var scriptedPtrNil *concat

func TestBadInputPanics(t *testing.T) {
	var nilOpt balance.Option
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewP2CNilDiscover", func() { balance.NewP2C[int, string, string](nil) }, "balance.NewP2C: nil Discover"},
		{"NewP2CNilOption", func() { balance.NewP2C(list(), nilOpt) }, "balance.NewP2C: option 0 is nil"},
		{"NewRoundRobinNilDiscover", func() { balance.NewRoundRobin[int, string, string](nil) }, "balance.NewRoundRobin: nil Discover"},
		{"NewRoundRobinNilOption", func() { balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](), nilOpt) }, "balance.NewRoundRobin: option 0 is nil"},
		{"WithRandNil", func() { balance.WithRand(nil) }, "balance.WithRand: nil Rand"},
		{"WithRandTypedNil", func() { balance.WithRand((*rand.Rand)(nil)) }, "balance.WithRand: nil Rand"},
		{"NewP2CTypedNilDiscover", func() { balance.NewP2C(discover.Discover[int, endpoint](scriptedPtrNil)) }, "balance.NewP2C: nil Discover"},
		{"WithErrorHandlerNil", func() { balance.WithErrorHandler(nil) }, "balance.WithErrorHandler: nil handler"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// Endpoints that take one request at a time: four callers over two of them
// are served two at a time, each waiting in Ready for a free endpoint, and
// a reservation released unused is back once the cache's goroutine has
// seen it.
func TestLimitedEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			time.Sleep(10 * time.Millisecond)
			return req, nil
		})
		one := func() endpoint {
			return load.NewPendingRequests[string, string](limit.NewConcurrency[string, string](work, 1))
		}
		bal := balance.NewP2C(list(one(), one()))
		defer bal.Close()

		p := readySettled(t, bal)
		q := readySettled(t, bal)
		if readyNowSettled(t, bal) {
			t.Fatal("ReadyNow with both endpoints reserved: got ready, want not ready")
		}
		p.Release()
		if !readyNowSettled(t, bal) {
			t.Fatal("ReadyNow after a release: got not ready, want ready")
		}
		q.Release()

		start := time.Now()
		var calls []*towertest.Outcome[time.Duration]
		for range 4 {
			calls = append(calls, towertest.Go(func() (time.Duration, error) {
				_, err := tower.Call(t.Context(), bal, "x")
				return time.Since(start), err
			}))
		}
		var at []time.Duration
		for _, c := range calls {
			d, err := c.Wait()
			if err != nil {
				t.Error(err)
			}
			at = append(at, d)
		}
		slices.Sort(at)
		if want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}; !slices.Equal(at, want) {
			t.Errorf("calls done at %v, want %v", at, want)
		}
	})
}

// A nil *discover.List is no Discover either.
func TestNilListPanics(t *testing.T) {
	towertest.Panics(t, "balance.NewP2C: nil Discover", func() { balance.NewP2C((*discover.List[endpoint])(nil)) })
}
