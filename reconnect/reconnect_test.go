package reconnect_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// The first Ready connects; Ready returns when the connect does, with a
// permit of the new service; later requests use the same service.
func TestConnectOnFirstReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		inner, h := towertest.NewMock[string, string]()
		rd := towertest.GoReady(t.Context(), r)
		checkConnects(t, mh, 1)
		time.Sleep(30 * time.Millisecond)
		connect(t, mh, inner)
		rd.ExpectElapsed(t, 30*time.Millisecond)
		towertest.CallThrough(t, rd.Value(t), h, "hello", "world")

		p, ok := towertest.ReadyNow(t, r)
		if !ok {
			t.Fatal("ReadyNow: not ready once connected, want ready")
		}
		towertest.CallThrough(t, p, h, "again", "world")
		checkConnects(t, mh, 1)
	})
}

// A failed connect does not fail Ready: the caller gets a permit whose
// Call returns the error, and the request goes nowhere. The next Ready
// connects again.
func TestFailedConnectIsReportedByCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		rd := towertest.GoReady(t.Context(), r)
		time.Sleep(10 * time.Millisecond)
		refuse(t, mh, errRefused)
		rd.ExpectElapsed(t, 10*time.Millisecond)
		mustConnectError(t, rd.Value(t), errRefused)

		inner, h := towertest.NewMock[string, string]()
		rd = towertest.GoReady(t.Context(), r)
		checkConnects(t, mh, 2)
		connect(t, mh, inner)
		rd.ExpectElapsed(t, 0) // at 10ms
		towertest.CallThrough(t, rd.Value(t), h, "hello", "world")
		if n := h.Calls(); n != 1 {
			t.Errorf("inner service got %d calls, want 1: the failed connect's request went somewhere", n)
		}
	})
}

// A service that fails its readiness check is broken for good: Reconnect
// drops it, closes it, and makes a new one within the same Ready; the
// caller never sees the failure.
func TestBrokenServiceIsRebuilt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old, oldH := newClosable()
		maker, mh := towertest.NewMock[string, svc]()
		r := reconnect.NewConnected[string, string, string](maker, target, old)
		defer r.Close()
		towertest.CallThrough(t, towertest.MustReady(t, r), oldH, "one", "1")

		oldH.FailReady(errBroken)
		rd := towertest.GoReady(t.Context(), r)
		if !old.isClosed() {
			t.Error("the broken service was not closed")
		}
		time.Sleep(20 * time.Millisecond)
		inner, h := towertest.NewMock[string, string]()
		connect(t, mh, inner)
		rd.ExpectElapsed(t, 20*time.Millisecond)
		towertest.CallThrough(t, rd.Value(t), h, "two", "2")
		if n := oldH.Calls(); n != 1 {
			t.Errorf("the broken service got %d calls, want 1", n)
		}
		checkConnects(t, mh, 1)
	})
}

// A maker that hands out a service that is broken from the start does not
// make Ready loop: the failure of a service made for this caller is the
// caller's, through Call, and each Ready makes one connect.
func TestBrokenOnArrivalIsReportedByCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		for i := range 3 {
			dead, h := newClosable()
			h.Close()
			rd := towertest.GoReady(t.Context(), r)
			connect(t, mh, dead)
			rd.ExpectElapsed(t, 0)
			mustConnectError(t, rd.Value(t), towertest.ErrClosed)
			if !dead.isClosed() {
				t.Errorf("round %d: the broken service was not closed", i)
			}
			checkConnects(t, mh, i+1)
		}
	})
}

// A maker that returns neither a service nor an error fails the connect.
func TestNilServiceIsAConnectError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		rd := towertest.GoReady(t.Context(), r)
		connect(t, mh, nil)
		rd.ExpectElapsed(t, 0)
		mustConnectError(t, rd.Value(t), reconnect.ErrNilService)
	})
}

// A slow connect: a caller whose ctx ends stops waiting and gets ctx's
// error at its deadline; the connect goes on, and a later caller gets its
// service without a second connect.
func TestSlowConnectOutlivesCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		a := towertest.GoReady(ctx, r)
		time.Sleep(60 * time.Millisecond)
		if !a.Done() {
			t.Fatalf("first caller: still waiting at 60ms, want %v at 50ms", context.DeadlineExceeded)
		}
		if _, err := a.Wait(); err != context.DeadlineExceeded || a.Elapsed() != 50*time.Millisecond {
			t.Fatalf("first caller: got %v at %v, want %v at 50ms", err, a.Elapsed(), context.DeadlineExceeded)
		}
		b := towertest.GoReady(t.Context(), r)
		time.Sleep(40 * time.Millisecond)
		inner, h := towertest.NewMock[string, string]()
		connect(t, mh, inner)
		b.ExpectElapsed(t, 40*time.Millisecond) // at 100ms
		towertest.CallThrough(t, b.Value(t), h, "hello", "world")
		checkConnects(t, mh, 1)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("inner service has %d reservations outstanding, want 0: the caller that left holds one", n)
		}
	})
}

// Ready with a done ctx ("ready now?") never waits for a connect: it
// starts one, and says not ready until the service is there.
func TestReadyNowStartsConnectAndReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		for i := range 2 {
			if _, ok := towertest.ReadyNow(t, r); ok {
				t.Fatalf("ReadyNow %d: ready before any service was made, want not ready", i)
			}
		}
		checkConnects(t, mh, 1)
		inner, h := towertest.NewMock[string, string]()
		connect(t, mh, inner)
		synctest.Wait()
		p, ok := towertest.ReadyNow(t, r)
		if !ok {
			t.Fatal("ReadyNow: not ready once connected, want ready")
		}
		towertest.CallThrough(t, p, h, "hello", "world")
	})
}

// Many callers share one connect: it runs once, and they all get the
// service when it finishes.
func TestCallersShareOneConnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		var rds []*towertest.Outcome[permit]
		for range 3 {
			rds = append(rds, towertest.GoReady(t.Context(), r))
		}
		time.Sleep(100 * time.Millisecond)
		inner, h := towertest.NewMock[string, string]()
		connect(t, mh, inner)
		for _, rd := range rds {
			rd.ExpectElapsed(t, 100*time.Millisecond)
			towertest.CallThrough(t, rd.Value(t), h, "hello", "world")
		}
		checkConnects(t, mh, 1)
	})
}

// A failed connect reaches every caller waiting for it, each through its
// own Call; it is not kept for the next caller, who connects again.
func TestFailedConnectReachesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		var rds []*towertest.Outcome[permit]
		for range 3 {
			rds = append(rds, towertest.GoReady(t.Context(), r))
		}
		refuse(t, mh, errRefused)
		for _, rd := range rds {
			rd.ExpectElapsed(t, 0)
			mustConnectError(t, rd.Value(t), errRefused)
		}
		if _, ok := towertest.ReadyNow(t, r); ok {
			t.Fatal("ReadyNow: ready after a failed connect that everyone was told about, want a new connect")
		}
		checkConnects(t, mh, 2)
	})
}

// A connect that fails while nobody waits for it (the caller that started
// it asked "ready now?" and left) is reported to the next caller, through
// its Call, as tower reports it to the next call; the caller after that
// connects again.
func TestFailedConnectNobodyWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		towertest.ReadyNow(t, r)
		refuse(t, mh, errRefused)
		synctest.Wait()
		p, ok := towertest.ReadyNow(t, r)
		if !ok {
			t.Fatal("ReadyNow: not ready, want the failed connect's permit")
		}
		mustConnectError(t, p, errRefused)
		if _, ok := towertest.ReadyNow(t, r); ok {
			t.Fatal("ReadyNow: ready, want a new connect")
		}
		checkConnects(t, mh, 2)
	})
}

// The maker's own Ready failing means the maker is broken for good, and so
// is the Reconnect: Ready returns that error, now and later.
func TestMakerFailureIsFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		mh.FailReady(errBroken)
		for i := range 2 {
			if _, err := r.Ready(t.Context()); err != errBroken {
				t.Fatalf("Ready %d: got %v, want %v", i, err, errBroken)
			}
		}
		checkConnects(t, mh, 0)
	})
}

// Two callers waiting on the same service see it fail: the service is
// dropped once and one connect serves both.
func TestOneFailureOneReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old, oldH := newClosable()
		oldH.Allow(0)
		maker, mh := towertest.NewMock[string, svc]()
		r := reconnect.NewConnected[string, string, string](maker, target, old)
		defer r.Close()
		a := towertest.GoReady(t.Context(), r)
		b := towertest.GoReady(t.Context(), r)
		oldH.Close() // both Readies fail with ErrClosed
		inner, h := towertest.NewMock[string, string]()
		connect(t, mh, inner)
		a.ExpectElapsed(t, 0)
		towertest.CallThrough(t, a.Value(t), h, "a", "1")
		b.ExpectElapsed(t, 0)
		towertest.CallThrough(t, b.Value(t), h, "b", "2")
		checkConnects(t, mh, 1)
	})
}

// The connect runs with the values of the ctx of the caller who started
// it, but not with its cancellation: the caller leaving does not cancel it.
func TestConnectContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		type key struct{}
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "trace-1"))
		rd := towertest.GoReady(ctx, r)
		cancel()
		rd.Wait()
		req := mh.ExpectSettled(t, target)
		if got := req.Context().Value(key{}); got != "trace-1" {
			t.Errorf("connect ctx has value %v, want %q", got, "trace-1")
		}
		if err := req.Context().Err(); err != nil {
			t.Errorf("connect ctx ended with %v when its caller left, want it to go on", err)
		}
		req.Respond(nil)
	})
}

// Close cancels the connect in progress, waits for it, and fails its
// waiters and every later Ready with ErrClosed.
func TestCloseWhileConnecting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		rd := towertest.GoReady(t.Context(), r)
		req := mh.ExpectSettled(t, target)
		if err := r.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		if err := req.Context().Err(); err != context.Canceled {
			t.Errorf("connect ctx: got %v after Close, want %v", err, context.Canceled)
		}
		_, err := rd.Wait()
		if err != reconnect.ErrClosed {
			t.Errorf("waiting caller: got %v, want %v", err, reconnect.ErrClosed)
		}
		if _, err := r.Ready(t.Context()); err != reconnect.ErrClosed {
			t.Errorf("Ready after Close: got %v, want %v", err, reconnect.ErrClosed)
		}
	})
}

// Close closes the current service; a permit handed out before still
// calls it. Close is idempotent.
func TestCloseWhileConnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner, h := newClosable()
		maker, _ := towertest.NewMock[string, svc]()
		r := reconnect.NewConnected[string, string, string](maker, target, inner)
		p := towertest.MustReady(t, r)
		for range 2 {
			if err := r.Close(); err != nil {
				t.Errorf("Close: got %v, want nil", err)
			}
		}
		if !inner.isClosed() {
			t.Error("Close did not close the current service")
		}
		towertest.CallThrough(t, p, h, "hello", "world")
		if _, err := r.Ready(t.Context()); err != reconnect.ErrClosed {
			t.Errorf("Ready after Close: got %v, want %v", err, reconnect.ErrClosed)
		}
	})
}

// A service made after Close (the maker ignored the cancellation) is
// closed at once and never used.
func TestServiceMadeAfterCloseIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late, _ := newClosable()
		started := make(chan struct{})
		maker := reconnect.MakeFunc[string, string, string](func(ctx context.Context, _ string) (tower.Service[string, string], error) {
			close(started)
			<-ctx.Done()
			return late, nil
		})
		r := reconnect.New(maker, target)
		towertest.ReadyNow(t, r)
		<-started
		r.Close()
		if !late.isClosed() {
			t.Error("a service made after Close was not closed by the time Close returned")
		}
	})
}

func TestConnectErrorMessage(t *testing.T) {
	err := error(&reconnect.ConnectError{Err: errRefused})
	if got, want := err.Error(), "reconnect: connect failed: connection refused"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, errRefused) {
		t.Errorf("errors.Is(%v, %v) = false, want true", err, errRefused)
	}
}
