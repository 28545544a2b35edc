package loadshed_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towertest"
)

// tower: when_ready. A ready inner service gets the request, and its answer
// comes back.
func TestWhenReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		svc := loadshed.New[string, string](m)
		towertest.CallThrough(t, towertest.MustReady(t, svc), h, "hello", "world")
	})
}

// tower: when_not_ready. Ready succeeds although the inner service is not
// ready, and the permit's Call fails at once with ErrOverloaded. The inner
// service never sees the request and reserved nothing for it.
func TestWhenNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		svc := loadshed.New[string, string](m)
		start := time.Now()
		p, err := svc.Ready(t.Context())
		if err != nil || !p.Held() {
			t.Fatalf("Ready: got %v, held %t; want a permit", err, p.Held())
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("the inner service has %d reservations outstanding, want 0", n)
		}
		res, err := p.Call(t.Context(), "hello")
		if res != "" || err != loadshed.ErrOverloaded {
			t.Errorf("Call: got %q, %v; want \"\", %v", res, err, loadshed.ErrOverloaded)
		}
		if got, want := err.Error(), "service overloaded"; got != want {
			t.Errorf("got message %q, want %q", got, want)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("shedding took %v, want 0", got)
		}
		synctest.Wait()
		if n := h.Calls(); n != 0 {
			t.Errorf("the inner service got %d calls, want 0", n)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("the inner service has %d reservations outstanding, want 0", n)
		}
	})
}

// Ready never waits, whatever its ctx: with a ctx that never ends and an
// inner service that is not ready, it returns at once, in virtual time 0ms.
func TestReadyNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		svc := loadshed.New[string, string](m)
		start := time.Now()
		p, err := svc.Ready(context.Background())
		if err != nil {
			t.Fatalf("Ready: got error %v, want a permit", err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("Ready returned after %v, want 0", got)
		}
		p.Release()
		if n := h.Outstanding(); n != 0 {
			t.Errorf("the inner service has %d reservations outstanding, want 0", n)
		}
	})
}

// An inner service that is broken fails Ready with its error, unchanged: a
// broken service is not an overloaded one.
func TestInnerReadyFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		broken := errors.New("broken")
		h.FailReady(broken)
		svc := loadshed.New[string, string](m)
		p, err := svc.Ready(t.Context())
		if err != broken {
			t.Errorf("Ready: got error %v, want %v", err, broken)
		}
		if p.Held() {
			t.Error("Ready failed and returned a permit that holds something, want the zero Permit")
		}
	})
}

// LoadShed > ConcurrencyLimit(1): with one call in flight, a second caller
// is shed at once, at 0ms, instead of waiting for the permit; once the
// first call completes, at 100ms, the next caller gets through.
func TestLoadShedOutsideConcurrencyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		svc := loadshed.New[string, string](limit.NewConcurrency[string, string](m, 1))
		start := time.Now()

		first := towertest.GoRequest(t.Context(), svc, "first")
		r1 := h.ExpectNow(t, "first")
		second := towertest.GoRequest(t.Context(), svc, "second")
		if !second.Done() {
			t.Fatal("the second caller waits, want it shed at once")
		}
		if _, err := second.Wait(); err != loadshed.ErrOverloaded || second.Since(start) != 0 {
			t.Errorf("second caller: got %v at %v, want %v at 0s", err, second.Since(start), loadshed.ErrOverloaded)
		}

		time.Sleep(100 * time.Millisecond)
		r1.Respond("one")
		if res, err := first.Wait(); res != "one" || err != nil || first.Since(start) != 100*time.Millisecond {
			t.Errorf("first caller: got %q, %v at %v; want %q, nil at 100ms", res, err, first.Since(start), "one")
		}

		third := towertest.GoRequest(t.Context(), svc, "third")
		h.ExpectNow(t, "third").Respond("three") // the first call has completed
		if res, err := third.Wait(); res != "three" || err != nil {
			t.Errorf("third caller: got %q, %v; want %q, nil", res, err, "three")
		}
		if n := h.Calls(); n != 2 {
			t.Errorf("the inner service got %d calls, want 2", n)
		}
	})
}

// LoadShed > Buffer(2) > ConcurrencyLimit(1): the Buffer takes requests
// while it has a slot, so four are taken (one in flight, one in the
// worker's hand, two queued) and the fifth is shed at once. Each of the
// four is served in turn.
func TestLoadShedOutsideBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		buf := buffer.New[string, string](limit.NewConcurrency[string, string](m, 1), 2)
		defer buf.Close()
		svc := loadshed.New[string, string](buf)
		start := time.Now()

		reqs := []string{"r1", "r2", "r3", "r4"}
		var taken []*towertest.Outcome[string]
		for _, req := range reqs {
			taken = append(taken, towertest.GoRequest(t.Context(), svc, req))
		}
		shed := towertest.GoRequest(t.Context(), svc, "r5")
		if !shed.Done() {
			t.Fatalf("fifth caller waits, want %v at 0s", loadshed.ErrOverloaded)
		}
		if _, err := shed.Wait(); err != loadshed.ErrOverloaded || shed.Since(start) != 0 {
			t.Fatalf("fifth caller: got %v at %v; want %v at 0s", err, shed.Since(start), loadshed.ErrOverloaded)
		}
		for i, o := range taken {
			if o.Done() {
				_, err := o.Wait()
				t.Fatalf("caller %d returned %v, want it taken and waiting", i+1, err)
			}
			h.ExpectSettled(t, reqs[i]).Respond("ok")
			if res, err := o.Wait(); res != "ok" || err != nil {
				t.Errorf("caller %d: got %q, %v; want %q, nil", i+1, res, err, "ok")
			}
		}
	})
}

func TestNewPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"New", func() { loadshed.New[string, string](nil) }},
		{"LayerWrap", func() { loadshed.NewLayer[string, string]().Wrap(nil) }},
		{"TypedNil", func() { loadshed.New[string, string]((*towertest.Mock[string, string])(nil)) }},
		{"NilServiceFunc", func() { loadshed.New[string, string](tower.ServiceFunc[string, string](nil)) }},
		{"LayerWrapTypedNil", func() { loadshed.NewLayer[string, string]().Wrap((*towertest.Mock[string, string])(nil)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const want = "loadshed.New: nil inner service"
			towertest.Panics(t, want, tt.f)
		})
	}
}

func TestConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] { return loadshed.NewLayer[string, string]() },
		Request:  "hello",
		Response: "world",
	}.Run(t)
}

var sink int

// echo answers at once with its request.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// The inner service is always ready: the permit is the inner service's
// own, and LoadShed adds one ReadyNow.
func BenchmarkLoadShed(b *testing.B) {
	towertest.Bench(b, loadshed.New[int, int](echo), 1)
}

// neverReady is a service that is never ready.
type neverReady struct{}

func (neverReady) Ready(ctx context.Context) (tower.Permit[int, int], error) {
	<-ctx.Done()
	return tower.Permit[int, int]{}, ctx.Err()
}

// The inner service is never ready: every request is shed.
func BenchmarkLoadShedShedding(b *testing.B) {
	benchShedding(b, loadshed.New[int, int](neverReady{}))
}

// benchShedding is Bench for a svc that sheds every request: each Call
// must fail with ErrOverloaded.
func benchShedding(b *testing.B, svc tower.Service[int, int]) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Call(ctx, 1)
		if err != loadshed.ErrOverloaded {
			b.Fatalf("got %v, want %v", err, loadshed.ErrOverloaded)
		}
		sink += res
	}
}

// Neither a request that goes through nor one that is shed allocates.
func TestDoesNotAllocate(t *testing.T) {
	tests := []struct {
		name    string
		inner   tower.Service[int, int]
		wantErr error
	}{
		{"Ready", echo, nil},
		{"Shedding", neverReady{}, loadshed.ErrOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := loadshed.New(tt.inner)
			ctx := context.Background()
			allocs := testing.AllocsPerRun(100, func() {
				p, _ := svc.Ready(ctx)
				res, err := p.Call(ctx, 1)
				if err != tt.wantErr {
					panic(err)
				}
				sink += res
			})
			if allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
		})
	}
}
