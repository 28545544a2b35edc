package load_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

const ms = float64(time.Millisecond) // nanoseconds per millisecond, as tower's NANOS_PER_MILLI

// tower: default_decay. The default RTT estimate decays, so that a new
// endpoint is considered if the default RTT is too high. Reading the load
// is an update with an RTT of zero: each read multiplies the estimate by
// exp(-Δt/decay), Δt being the time since the previous read.
func TestPeakEwmaDefaultDecay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := load.NewPeakEwma[string, string](echo, 10*time.Millisecond, time.Second)
		checkLoad(t, svc, 10*ms)

		time.Sleep(100 * time.Millisecond)
		got := svc.Load()
		if !(9*ms < got && got < 10*ms) {
			t.Errorf("after 100ms: got load %v, want between 9ms and 10ms", got)
		}
		want := 10 * ms * math.Exp(-0.1)
		if got != want {
			t.Errorf("after 100ms: got load %v, want exactly %v", got, want)
		}

		time.Sleep(100 * time.Millisecond)
		got = svc.Load()
		if !(8*ms < got && got < 9*ms) {
			t.Errorf("after 200ms: got load %v, want between 8ms and 9ms", got)
		}
		want *= math.Exp(-0.1)
		if got != want {
			t.Errorf("after 200ms: got load %v, want exactly %v", got, want)
		}
	})
}

// tower: compound_decay. Two requests in flight multiply the estimate by 3;
// an RTT above the estimate replaces it (200ms × (1 pending + 1) = 400ms
// exactly); an RTT equal to it keeps it (200ms exactly); then the estimate
// decays while nothing happens. tower's "dropping the response future" is
// the mock answering the call.
func TestPeakEwmaCompoundDecay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewPeakEwma[string, string](mock, 20*time.Millisecond, time.Second)
		checkLoad(t, svc, 20*ms)

		time.Sleep(100 * time.Millisecond)
		rsp0 := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "rsp0")
		got := svc.Load()
		estimate := 20 * ms * math.Exp(-0.1)
		if !(got > 20*ms) || got != estimate*2 {
			t.Errorf("one pending at 100ms: got load %v, want %v (above 20ms)", got, estimate*2)
		}

		time.Sleep(100 * time.Millisecond)
		rsp1 := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "rsp1")
		got = svc.Load()
		estimate *= math.Exp(-0.1)
		if !(got > 40*ms) || got != estimate*3 {
			t.Errorf("two pending at 200ms: got load %v, want %v (above 40ms)", got, estimate*3)
		}

		time.Sleep(100 * time.Millisecond)
		h.ExpectSettled(t, "rsp0").Respond("done0")
		rsp0.ExpectValue(t, "done0")
		checkLoad(t, svc, 400_000_000)

		time.Sleep(100 * time.Millisecond)
		h.ExpectSettled(t, "rsp1").Respond("done1")
		rsp1.ExpectValue(t, "done1")
		checkLoad(t, svc, 200_000_000)

		// The estimate decays as time passes.
		time.Sleep(time.Second)
		got = svc.Load()
		if want := 200 * ms * math.Exp(-1); !(got < 100*ms) || got != want {
			t.Errorf("1s later: got load %v, want %v (below 100ms)", got, want)
		}
		time.Sleep(10 * time.Second)
		got = svc.Load()
		if want := 200 * ms * math.Exp(-1) * math.Exp(-10); !(got < 100_000) || got != want {
			t.Errorf("10s later: got load %v, want %v (below 0.1ms)", got, want)
		}
	})
}

// A faster response moves the estimate towards its RTT by 1-exp(-Δt/decay),
// Δt being the time since the estimate was last updated.
func TestPeakEwmaFasterResponseDecays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewPeakEwma[string, string](mock, 100*time.Millisecond, time.Second)
		time.Sleep(500 * time.Millisecond)
		c := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "fast")
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "fast").Respond("ok")
		c.ExpectValue(t, "ok")
		// The estimate was last updated at 0 (construction); the response
		// comes 510ms later with an RTT of 10ms.
		w := math.Exp(-0.51)
		checkLoad(t, svc, float64(100*ms*w)+float64(10*ms*(1-w)))
	})
}

// An RTT equal to the estimate is not a peak: it decays the estimate
// towards itself, as tower's does, which in floats can move it by an ulp.
// With 1ms+1ns, 764ms after the last update, it does; a peak would keep
// it exactly.
func TestPeakEwmaEqualResponseDecays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rtt = time.Millisecond + 1
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewPeakEwma[string, string](mock, rtt, time.Second)
		time.Sleep(764*time.Millisecond - rtt)
		c := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "same")
		time.Sleep(rtt)
		h.ExpectSettled(t, "same").Respond("ok")
		c.ExpectValue(t, "ok")
		r, w := float64(rtt), math.Exp(-0.764)
		want := float64(r*w) + float64(r*(1-w))
		if want == r {
			t.Fatal("the decay of an equal RTT rounds back to it: pick another")
		}
		checkLoad(t, svc, want)
	})
}

// A request counts from its call, not from Ready: a permit reserved and
// released unused changes nothing.
func TestPeakEwmaReservationIsNotPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewPeakEwma[string, string](mock, 20*time.Millisecond, time.Second)
		p := towertest.MustReady(t, svc)
		checkLoad(t, svc, 20*ms)
		p.Release()
		checkLoad(t, svc, 20*ms)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("mock has %d reservations outstanding, want 0", n)
		}
	})
}

// An error is a response like any other: its RTT is measured (tower's
// PeakEwma ignores failures; linkerd2-proxy#4537).
func TestPeakEwmaErrorIsMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewPeakEwma[string, string](mock, 20*time.Millisecond, time.Second)
		c := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "x")
		time.Sleep(300 * time.Millisecond)
		boom := errors.New("boom")
		h.ExpectSettled(t, "x").Fail(boom)
		c.ExpectError(t, boom)
		checkLoad(t, svc, 300*ms)
	})
}

// A panicking inner call completes its request, so it does not stay
// pending for ever.
func TestPeakEwmaPanicCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
			time.Sleep(50 * time.Millisecond)
			panic("inner exploded")
		})
		svc := load.NewPeakEwma[string, string](inner, 20*time.Millisecond, time.Second)
		towertest.Panics(t, "inner exploded", func() { tower.Call(t.Context(), svc, "x") })
		checkLoad(t, svc, 50*ms) // a peak of 50ms, and nothing pending
	})
}

// body stands for a response whose body is read after the call returns: it
// holds the request's Handle until it is closed.
type body struct {
	h *load.Handle
}

func (b *body) Close() { b.h.Done() }

// bodyCompletion moves the Handle into the response, as tower's
// TrackCompletion for an HTTP body does.
type bodyCompletion struct{}

func (bodyCompletion) Track(h *load.Handle, b *body) *body {
	b.h = h
	return b
}

// With a Completion, the RTT runs until the body is read, not until the
// call returns.
func TestPeakEwmaWithCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := tower.ServiceFunc[string, *body](func(context.Context, string) (*body, error) {
			time.Sleep(10 * time.Millisecond) // the headers
			return &body{}, nil
		})
		svc := load.NewPeakEwma[string, *body](inner, 20*time.Millisecond, time.Second, load.WithCompletion[*body](bodyCompletion{}))
		b, err := tower.Call(t.Context(), svc, "x")
		if err != nil {
			t.Fatal(err)
		}
		w := math.Exp(-0.01)
		estimate := 20 * ms * w // the read decays it for the 10ms elapsed
		checkLoad(t, svc, estimate*2)
		time.Sleep(290 * time.Millisecond) // reading the body
		b.Close()
		b.Close() // a second Done does nothing
		checkLoad(t, svc, 300*ms)
	})
}
