package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/throttle"
	"github.com/towergo/tower/towertest"
)

// With a seeded random source, the requests rejected are exactly those
// whose draw falls below the probability the formula gives at that point,
// the rejected requests counted among the requests: a model of the rule,
// kept in the test, tells each one. The backend refuses every other
// request it gets.
func TestWhichRejected(t *testing.T) {
	const seed = 7
	b := &backend{}
	svc := throttle.New(b, throttle.NotOverloaded, throttle.WithRand(rand.New(rand.NewPCG(seed, 0))))
	model := rand.New(rand.NewPCG(seed, 0))
	var requests, accepts, rejections, sent int
	for i := range 2000 {
		p := max(0, (float64(requests)-2*float64(accepts))/(float64(requests)+1))
		p = min(p, throttle.DefaultMaxRejection)
		want := p > 0 && model.Float64() < p
		b.refuse.Store(sent%4 != 0) // the backend accepts one request in four
		_, err := tower.Call(t.Context(), svc, "req")
		if got := errors.Is(err, throttle.ErrThrottled); got != want {
			t.Fatalf("request %d: rejected %t, want %t (probability %v)", i, got, want, p)
		}
		requests++
		if want {
			rejections++
			continue
		}
		if sent%4 == 0 {
			accepts++
		}
		sent++
	}
	if n := b.calls.Load(); n != int64(sent) {
		t.Errorf("the backend got %d calls, want %d", n, sent)
	}
	t.Logf("%d requests: %d rejected, %d sent, %d accepted", requests, rejections, sent, accepts)
	if rejections == 0 {
		t.Error("no request was rejected: the test tests nothing")
	}
}

// A scripted source: the probability after 10 refusals is 10/11; the
// draws decide, one by one, and every rejected request counts.
func TestWhichRejectedScripted(t *testing.T) {
	b := &backend{}
	draws := newScriptLater(t, 0.5, 0.95, 0.9, 0)
	svc := throttle.New(b, throttle.NotOverloaded, throttle.WithMaxRejection(1), throttle.WithRand(draws))
	fill(t, svc, b, 10, 0)
	draws.arm()
	b.refuse.Store(true)
	steps := []struct {
		rejected bool
		after    float64
	}{
		{true, 11.0 / 12},  // 0.5 < 10/11: rejected, 11 requests
		{false, 12.0 / 13}, // 0.95 >= 11/12: sent and refused, 12 requests
		{true, 13.0 / 14},  // 0.9 < 12/13: rejected
		{true, 14.0 / 15},  // 0 < 13/14: rejected
	}
	for i, s := range steps {
		_, err := tower.Call(t.Context(), svc, "req")
		if got := errors.Is(err, throttle.ErrThrottled); got != s.rejected {
			t.Errorf("request %d: rejected %t, want %t", i, got, s.rejected)
		}
		expectProbability(t, svc, s.after)
	}
	if n := b.calls.Load(); n != 11 {
		t.Errorf("the backend got %d calls, want 11", n)
	}
	if n := draws.left(); n != 0 {
		t.Errorf("%d draws left, want 0", n)
	}
}

// A rejected request neither calls the inner service nor waits for it:
// with the inner service not ready and Ready's ctx never done, Ready
// returns at once, at 0s, a permit that holds nothing of the inner
// service; its Call fails with ErrThrottled, counts a request, and
// reports Throttled. A rejecting permit released unused counts nothing.
func TestRejectedDoesNotReachInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		var sink metrics.Counts
		draws := newScriptLater(t, 0, 0, 0)
		svc := throttle.New(m, throttle.NotOverloaded, throttle.WithMaxRejection(1), throttle.WithRand(draws), throttle.WithMetrics(&sink))
		for range 3 {
			call := towertest.GoRequest(t.Context(), svc, "req")
			h.ExpectSettled(t, "req").Fail(loadshed.ErrOverloaded)
			call.ExpectError(t, loadshed.ErrOverloaded)
		}
		expectProbability(t, svc, 3.0/4)
		draws.arm()
		h.Allow(0)
		start := time.Now()

		ready := towertest.GoReady(context.Background(), svc)
		if !ready.Done() {
			t.Fatal("Ready waits for the inner service, want a rejecting permit at once")
		}
		p := ready.Value(t)
		h.ExpectOutstanding(t, 0)
		_, err := p.Call(t.Context(), "req")
		if err != throttle.ErrThrottled {
			t.Errorf("Call: got %v, want %v", err, throttle.ErrThrottled)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("rejecting took %v, want 0", got)
		}
		expectProbability(t, svc, 4.0/5)
		if n := sink.Get(metrics.Throttled); n != 1 {
			t.Errorf("Throttled: got %d, want 1", n)
		}

		p = ready2(t, svc)
		p.Release()
		p.Release()
		expectProbability(t, svc, 4.0/5)
		if n := sink.Get(metrics.Throttled); n != 1 {
			t.Errorf("Throttled after a rejecting permit was released: got %d, want 1", n)
		}

		// A done ctx: rejected all the same, without error.
		p, err = svc.Ready(doneCtx)
		if err != nil {
			t.Fatalf("Ready with a done ctx: got %v, want a rejecting permit", err)
		}
		if _, err := p.Call(t.Context(), "req"); err != throttle.ErrThrottled {
			t.Errorf("Call: got %v, want %v", err, throttle.ErrThrottled)
		}
		h.ExpectIdle(t, 3)
		if n := sink.Get(metrics.Throttled); n != 2 {
			t.Errorf("Throttled: got %d, want 2", n)
		}
		expectProbability(t, svc, 5.0/6)
	})
}

// ready2 returns the permit of svc's Ready, which must not fail.
func ready2(t *testing.T, svc tower.Service[string, string]) tower.Permit[string, string] {
	t.Helper()
	p, err := svc.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: got %v, want a permit", err)
	}
	return p
}

// Without a sink, a rejected request is failed all the same.
func TestRejectedWithoutMetrics(t *testing.T) {
	b := &backend{}
	draws := newScriptLater(t, 0)
	svc := throttle.New(b, throttle.NotOverloaded, throttle.WithRand(draws), throttle.WithMetrics(nil))
	fill(t, svc, b, 1, 0)
	draws.arm()
	if _, err := tower.Call(t.Context(), svc, "req"); err != throttle.ErrThrottled {
		t.Errorf("got %v, want %v", err, throttle.ErrThrottled)
	}
}

// A request sent is counted when its call returns, with the classifier's
// verdict; a permit released unused is not counted, and gives the inner
// reservation back.
func TestSentCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		svc := throttle.New(m, throttle.NotOverloaded, throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))
		call := towertest.GoRequest(t.Context(), svc, "req")
		r := h.ExpectSettled(t, "req")
		expectProbability(t, svc, 0) // in flight: not counted yet
		time.Sleep(time.Second)
		r.Fail(loadshed.ErrOverloaded)
		call.ExpectError(t, loadshed.ErrOverloaded)
		expectProbability(t, svc, 1.0/2)

		p := ready2(t, svc)
		h.ExpectOutstanding(t, 1)
		p.Release()
		h.ExpectOutstanding(t, 0)
		expectProbability(t, svc, 1.0/2)
		h.ExpectIdle(t, 1)
	})
}

// The classifier sees the call's result, and decides what is accepted: a
// response it rejects counts as a refusal, an error it accepts as an
// accept.
func TestClassifier(t *testing.T) {
	ok := errors.New("fine")
	inner := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if req == "err" {
			return "", ok
		}
		return req, nil
	})
	var seen []string
	accepted := func(res string, err error) bool {
		seen = append(seen, fmt.Sprintf("%q %v", res, err))
		return res != "busy"
	}
	svc := throttle.New(inner, accepted, throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))
	for _, req := range []string{"busy", "err", "busy", "busy"} {
		if _, err := tower.Call(t.Context(), svc, req); errors.Is(err, throttle.ErrThrottled) {
			t.Fatal("throttled")
		}
	}
	expectProbability(t, svc, 2.0/5) // 4 requests, 1 accept
	want := []string{`"busy" <nil>`, `"" fine`, `"busy" <nil>`, `"busy" <nil>`}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("the classifier saw %q, want %q", seen, want)
	}
}

// A call that fails while its caller's ctx is cancelled is not counted at
// all, and the classifier is not asked: even an overload error then says
// nothing. A call that succeeds although its ctx was cancelled meanwhile
// is counted, and so is one whose ctx's deadline passed: the classifier
// says what it is (NotOverloaded: accepted).
func TestCancelledNotCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cancelled bool // the inner service's answer to a cancelled call
		inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
			if req == "refuse" {
				return "", loadshed.ErrOverloaded
			}
			<-ctx.Done()
			if cancelled {
				return "late", nil
			}
			return "", fmt.Errorf("gave up: %w", loadshed.ErrOverloaded)
		})
		asked := 0
		accepted := func(_ string, err error) bool {
			asked++
			return throttle.NotOverloaded("", err)
		}
		svc := throttle.New(inner, accepted, throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))

		ctx, cancel := context.WithCancel(t.Context())
		call := towertest.GoRequest(ctx, svc, "wait")
		cancel()
		if _, err := call.Wait(); !errors.Is(err, loadshed.ErrOverloaded) {
			t.Fatalf("got %v, want %v", err, loadshed.ErrOverloaded)
		}
		expectProbability(t, svc, 0)
		if asked != 0 {
			t.Errorf("the classifier was asked %d times, want 0", asked)
		}

		cancelled = true
		ctx, cancel = context.WithCancel(t.Context())
		call = towertest.GoRequest(ctx, svc, "wait")
		cancel()
		call.ExpectValue(t, "late")
		cancelled = false

		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		call = towertest.GoRequest(ctx, svc, "wait")
		time.Sleep(time.Second)
		if _, err := call.Wait(); !errors.Is(err, loadshed.ErrOverloaded) { // counted: not cancelled
			t.Fatalf("got %v, want %v", err, loadshed.ErrOverloaded)
		}
		if asked != 2 {
			t.Errorf("the classifier was asked %d times, want 2", asked)
		}

		// Two requests so far, one accepted ("late") and one refused (the
		// deadline's, whose error is an overload). Five refusals more: 7
		// requests, 1 accept.
		for range 5 {
			tower.Call(t.Context(), svc, "refuse")
		}
		expectProbability(t, svc, 5.0/8)
	})
}

// recovered calls p with req on a goroutine of its own and returns what
// the call panicked with, or nil, once it has returned.
func recovered(p tower.Permit[string, string], req string) *towertest.Outcome[any] {
	return towertest.Go(func() (v any, err error) {
		defer func() { v = recover() }()
		p.Call(context.Background(), req)
		return nil, nil
	})
}

// A panic in the inner call, or in the classifier, goes up to the caller,
// and the call is not counted; the Throttle keeps working.
func TestPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		panicky := func(res string, _ error) bool {
			if res == "boom" {
				panic("classifier")
			}
			return res == "ok"
		}
		svc := throttle.New(m, panicky, throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))

		call := recovered(ready2(t, svc), "req")
		h.ExpectSettled(t, "req").Panic("inner")
		if v := call.Value(t); v != "inner" {
			t.Errorf("the caller recovered %v, want %q", v, "inner")
		}

		call = recovered(ready2(t, svc), "req")
		h.ExpectSettled(t, "req").Respond("boom")
		if v := call.Value(t); v != "classifier" {
			t.Errorf("the caller recovered %v, want %q", v, "classifier")
		}
		h.ExpectOutstanding(t, 0)
		expectProbability(t, svc, 0)

		call2 := towertest.GoRequest(t.Context(), svc, "req")
		h.ExpectSettled(t, "req").Respond("no")
		call2.ExpectValue(t, "no")
		expectProbability(t, svc, 1.0/2)
	})
}
