package steer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/steer"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	handle = towertest.Handle[string, string]
)

// constant is a service that answers every request with res at once.
func constant(res string) svc {
	return tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return res, nil })
}

// always returns a picker that picks i.
func always(i int) steer.Picker[string] {
	return func(context.Context, string, int) int { return i }
}

// byName picks service 0 for requests that start with "a", 1 otherwise.
func byName(_ context.Context, req string, _ int) int {
	if req != "" && req[0] == 'a' {
		return 0
	}
	return 1
}

// twoMocks returns a Steer over two mocks, picked by byName, and their
// handles.
func twoMocks() (*steer.Steer[string, string], *handle, *handle) {
	a, ha := towertest.NewMock[string, string]()
	b, hb := towertest.NewMock[string, string]()
	return steer.New([]svc{a, b}, byName), ha, hb
}

// checkIdle fails t unless the service behind h holds no reservation and
// got calls calls.
func checkIdle(t *testing.T, name string, h *handle, calls int) {
	t.Helper()
	if n, c := h.Outstanding(), h.Calls(); n != 0 || c != calls {
		t.Errorf("service %s has %d reservations outstanding and got %d calls, want 0 and %d", name, n, c, calls)
	}
}

// tower: pick_correctly. Services answering "42" and "57"; the picker
// always picks 1, and the answer is "57".
func TestSteerPicksCorrectly(t *testing.T) {
	s := steer.New([]svc{constant("42"), constant("57")}, always(1))
	if res, err := tower.Call(t.Context(), s, "hello"); res != "57" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", res, err, "57")
	}
}

// tower: pending_all_ready, its intent inverted. tower's Steer over "42"
// (ready) and "57" (never ready) is not ready, although the picker only
// ever picks 0. Ours is ready at once, even asked with a done ctx, and the
// request for 0 is answered, while 57 is never asked for anything.
func TestSteerDoesNotWaitForAllServices(t *testing.T) {
	never, h := towertest.NewMock[string, string]()
	h.Allow(0)
	s := steer.New([]svc{constant("42"), never}, always(0))
	p, ok, err := tower.ReadyNow[string, string](s)
	if !ok || err != nil {
		t.Fatalf("ReadyNow: got %v, %v; want ready", ok, err)
	}
	if res, err := p.Call(t.Context(), "hello"); res != "42" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", res, err, "42")
	}
	checkIdle(t, "57", h, 0)
}

// A request for a ready service goes through at 0ms while another service
// is not ready and a request for it waits; that one goes through when its
// service becomes ready, at 50ms.
func TestSteerUnreadyServiceHoldsUpOnlyItsRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ha, hb := twoMocks()
		hb.Allow(0)
		callB := towertest.GoRequest(t.Context(), s, "bob")
		callA := towertest.GoRequest(t.Context(), s, "ada")
		ha.ExpectSettled(t, "ada").Respond("hello, ada")
		if res, err := callA.Wait(); res != "hello, ada" || err != nil || callA.Elapsed() != 0 {
			t.Errorf("request for the ready service: got %q, %v at %v; want %q, nil at 0s", res, err, callA.Elapsed(), "hello, ada")
		}
		hb.ExpectNone(t)

		time.Sleep(50 * time.Millisecond)
		hb.Allow(1)
		hb.ExpectSettled(t, "bob").Respond("hello, bob")
		if res, err := callB.Wait(); res != "hello, bob" || err != nil || callB.Elapsed() != 50*time.Millisecond {
			t.Errorf("request for the late service: got %q, %v at %v; want %q, nil at 50ms", res, err, callB.Elapsed(), "hello, bob")
		}
		checkIdle(t, "a", ha, 1)
		checkIdle(t, "b", hb, 1)
	})
}

// The caller's ctx ends while Call waits for the picked service: Call
// returns ctx.Err() unchanged, at that instant, and leaves nothing reserved
// on that service, which never sees the request.
func TestSteerContextEndsWhileWaitingForService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ha, hb := twoMocks()
		hb.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Millisecond)
		defer cancel()
		call := towertest.GoRequest(ctx, s, "bob")
		if _, err := call.Wait(); err != context.DeadlineExceeded || call.Elapsed() != 40*time.Millisecond {
			t.Errorf("got %v at %v, want %v at 40ms", err, call.Elapsed(), context.DeadlineExceeded)
		}
		hb.AllowAll()
		synctest.Wait()
		checkIdle(t, "a", ha, 0)
		checkIdle(t, "b", hb, 0)
	})
}

// A pick out of range fails the request with an *Error naming the index,
// whose cause is ErrBadPick; no service is reserved or called. The picker's
// count parameter is an int like any other: its extremes are out of range,
// not wrapped into it.
func TestSteerBadPick(t *testing.T) {
	for _, i := range []int{-1, 2, math.MaxInt, math.MinInt} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			a, ha := towertest.NewMock[string, string]()
			b, hb := towertest.NewMock[string, string]()
			s := steer.New([]svc{a, b}, always(i))
			_, err := tower.Call(t.Context(), s, "hello")
			var se *steer.Error
			if !errors.As(err, &se) || se.Index != i || !errors.Is(err, steer.ErrBadPick) {
				t.Fatalf("got %v, want an *Error for index %d wrapping ErrBadPick", err, i)
			}
			if got, want := err.Error(), fmt.Sprintf("steer: service %d: picker returned an index out of range", i); got != want {
				t.Errorf("got message %q, want %q", got, want)
			}
			checkIdle(t, "a", ha, 0)
			checkIdle(t, "b", hb, 0)
		})
	}
}

// A picker that panics: the panic goes on up to the caller, before any
// service was asked; nothing is reserved, no service is marked broken, and
// the Steer serves on.
func TestSteerPickerPanics(t *testing.T) {
	a, ha := towertest.NewMock[string, string]()
	b, hb := towertest.NewMock[string, string]()
	s := steer.New([]svc{a, b}, func(ctx context.Context, req string, n int) int {
		if req == "boom" {
			panic("picker exploded")
		}
		return byName(ctx, req, n)
	})
	towertest.Panics(t, "picker exploded", func() { tower.Call(t.Context(), s, "boom") })
	checkIdle(t, "a", ha, 0)
	checkIdle(t, "b", hb, 0)
	for i := range 2 {
		if err := s.Broken(i); err != nil {
			t.Errorf("service %d: got broken %v, want not broken", i, err)
		}
	}
	p, ok := towertest.ReadyNow(t, s)
	if !ok {
		t.Fatal("ReadyNow after the panic: not ready, want ready")
	}
	p.Release()
}

// A service whose Ready fails is broken for good: the request that found
// it so, and every later one picked for it, fail with an *Error naming its
// index, without asking it again; the other service goes on serving, and
// the Steer stays ready.
func TestSteerBrokenService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ha, hb := twoMocks()
		boom := errors.New("boom")
		hb.FailReady(boom) // once; a second Ready would succeed
		_, err := tower.Call(t.Context(), s, "bob")
		var se *steer.Error
		if !errors.As(err, &se) || se.Index != 1 || se.Err != boom || err.Error() != "steer: service 1: boom" {
			t.Fatalf("got %v, want \"steer: service 1: boom\" as an *Error for index 1 wrapping %v", err, boom)
		}
		if _, again := tower.Call(t.Context(), s, "bob"); again != err {
			t.Errorf("second request for the broken service: got %v, want the same *Error, %v", again, err)
		}
		if got := s.Broken(1); got != err {
			t.Errorf("Broken(1): got %v, want %v", got, err)
		}

		call := towertest.GoRequest(t.Context(), s, "ada")
		ha.ExpectSettled(t, "ada").Respond("hello, ada")
		if res, err := call.Wait(); res != "hello, ada" || err != nil {
			t.Errorf("request for the other service: got %q, %v; want %q, nil", res, err, "hello, ada")
		}
		if got := s.Broken(0); got != nil {
			t.Errorf("Broken(0): got %v, want nil", got)
		}
		checkIdle(t, "a", ha, 1)
		checkIdle(t, "b", hb, 0)
	})
}

// A permit released unused reserves nothing anywhere and never consults
// the picker.
func TestSteerReleaseUnused(t *testing.T) {
	a, ha := towertest.NewMock[string, string]()
	picked := 0
	s := steer.New([]svc{a}, func(context.Context, string, int) int { picked++; return 0 })
	p := towertest.MustReady(t, s)
	p.Release()
	checkIdle(t, "a", ha, 0)
	if picked != 0 {
		t.Errorf("the picker ran %d times, want 0", picked)
	}
}

type tenantKey struct{}

// The picker gets the call's ctx and the number of services: here it
// routes on a value the caller put in ctx.
func TestSteerPickerSeesCallContext(t *testing.T) {
	s := steer.New([]svc{constant("zero"), constant("one"), constant("two")},
		func(ctx context.Context, _ string, n int) int { return ctx.Value(tenantKey{}).(int) % n })
	for tenant, want := range map[int]string{0: "zero", 4: "one", 5: "two"} {
		ctx := context.WithValue(t.Context(), tenantKey{}, tenant)
		if res, err := tower.Call(ctx, s, "hello"); res != want || err != nil {
			t.Errorf("tenant %d: got %q, %v; want %q, nil", tenant, res, err, want)
		}
	}
}

// Timeout > Steer: the wait for the picked service's readiness is in Call,
// so the timeout counts it; a Timeout per service inside the Steer does
// not. Service b becomes ready at 150ms and then answers at once; the
// timeout is 100ms.
func TestSteerTimeoutPlacement(t *testing.T) {
	tests := []struct {
		name      string
		build     func(a, b svc) svc
		wantErr   error
		wantAt    time.Duration
		wantCalls int // requests b received
	}{
		{"Timeout > Steer", func(a, b svc) svc {
			return timeout.New[string, string](steer.New([]svc{a, b}, byName), 100*time.Millisecond)
		}, timeout.ErrElapsed, 100 * time.Millisecond, 0},
		{"Steer > Timeout per service", func(a, b svc) svc {
			return steer.New([]svc{
				timeout.New(a, 100*time.Millisecond),
				timeout.New(b, 100*time.Millisecond),
			}, byName)
		}, nil, 150 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := towertest.NewMock[string, string]()
				b, hb := towertest.NewMock[string, string]()
				hb.Allow(0)
				call := towertest.GoRequest(t.Context(), tt.build(a, b), "bob")
				time.Sleep(150 * time.Millisecond)
				hb.Allow(1)
				synctest.Wait()
				if r, ok := hb.TryNext(); ok {
					r.Respond("hello, bob")
				}
				_, err := call.Wait()
				if d := call.Elapsed(); err != tt.wantErr || d != tt.wantAt {
					t.Errorf("got %v at %v, want %v at %v", err, d, tt.wantErr, tt.wantAt)
				}
				checkIdle(t, "b", hb, tt.wantCalls)
			})
		})
	}
}

// Many callers at once, over services that answer at once, each get their
// own service's answer.
func TestSteerConcurrentCallers(t *testing.T) {
	s := steer.New([]svc{constant("a"), constant("b")}, byName)
	var wg sync.WaitGroup
	for i := range 16 {
		req, want := "ada", "a"
		if i%2 == 1 {
			req, want = "bob", "b"
		}
		wg.Go(func() {
			for range 100 {
				if res, err := tower.Call(t.Context(), s, req); res != want || err != nil {
					t.Errorf("%s: got %q, %v; want %q, nil", req, res, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// New keeps its own copy of the services.
func TestSteerCopiesServices(t *testing.T) {
	services := []svc{constant("42")}
	s := steer.New(services, always(0))
	services[0] = constant("57")
	if res, _ := tower.Call(t.Context(), s, "hello"); res != "42" {
		t.Errorf("got %q, want %q", res, "42")
	}
}

func TestSteerBadInputPanics(t *testing.T) {
	tests := []struct {
		want string
		f    func()
	}{
		{"steer.New: no services", func() { steer.New([]svc(nil), always(0)) }},
		{"steer.New: no services", func() { steer.New([]svc{}, always(0)) }},
		{"steer.New: service 1 is nil", func() { steer.New([]svc{constant("a"), nil}, always(0)) }},
		{"steer.New: nil picker", func() { steer.New([]svc{constant("a")}, nil) }},
		{"steer.New: service 0 is nil", func() { steer.New([]svc{(*towertest.Mock[string, string])(nil)}, always(0)) }},
		{"steer.New: service 1 is nil", func() { steer.New([]svc{constant("a"), tower.ServiceFunc[string, string](nil)}, always(0)) }},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

// A Steer over one service, which the picker always picks, as a layer.
func TestConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] {
			return tower.LayerFunc[string, string](func(inner svc) svc {
				return steer.New([]svc{inner}, always(0))
			})
		},
		Request:  "hello",
		Response: "world",
	}.Run(t)
}
