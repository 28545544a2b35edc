package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// prober is a script that asks for a probe after the windows listed.
type prober struct {
	script
	probeAfter map[int]bool // window numbers, from 0 (the first Update)
}

func (p *prober) ProbeNext() bool { return p.probeAfter[len(p.samples)-1] }

// proberFirst asks for probes after the windows listed; a limiter also
// makes its first window a probe.
func proberFirst(after ...int) *prober {
	p := &prober{probeAfter: map[int]bool{}}
	for _, w := range after {
		p.probeAfter[w] = true
	}
	return p
}

// A limiter whose algorithm probes starts with a probe: the limit in force
// is a quarter of the initial 20, 5 (4 for normal priority, its reserve
// aside); calls beyond it wait. The probe ends once it has timed 3 calls
// (a short window's minimum, half the window's 6, and at most the 4 that
// normal priority may have in flight in it) that started with at most 5
// in flight, however short: its Sample has Probe set, the mean of those
// calls and the 3 callers that waited. The
// algorithm's limit is then in force again. Calls come 1ms apart, so that
// each ends at an instant of its own.
func TestFirstWindowIsAProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := proberFirst()
		l := adaptive.New[int, int](sleeper(10*time.Millisecond), just(alg), adaptive.WithWindow(time.Second, 6))
		if n := l.Limit(); n != 5 {
			t.Fatalf("limit at the start %d, want 5 (the probe's)", n)
		}
		var calls []*towertest.Outcome[int]
		for range 7 {
			calls = append(calls, towertest.GoRequest(t.Context(), tower.Service[int, int](l), 0))
			time.Sleep(time.Millisecond)
		}
		if n, w := l.InFlight(), l.Waiting(); n != 4 || w != 3 {
			t.Errorf("in flight %d, waiting %d at 7ms, want 4 and 3", n, w)
		}
		for _, c := range calls {
			c.Wait()
		}
		// The calls of 0, 1 and 2ms end at 10, 11 and 12ms, each letting a
		// waiter in: the probe has timed 3 calls at 12ms, and ends.
		if len(alg.samples) != 1 {
			t.Fatalf("%d windows, want 1", len(alg.samples))
		}
		want := adaptive.Sample{Timed: 3, MeanLatency: 10 * time.Millisecond, MinLatency: 10 * time.Millisecond,
			MaxInFlight: 3, Blocked: 3, Probe: true, Elapsed: 12 * time.Millisecond}
		if got := alg.samples[0]; got != want {
			t.Errorf("probe sample %+v, want %+v", got, want)
		}
		if n := l.Limit(); n != 20 {
			t.Errorf("limit after the probe %d, want 20", n)
		}
		if e := calls[6].Elapsed(); e != 16*time.Millisecond {
			t.Errorf("the last waiter, sent at 6ms, answered after %v, want 16ms (let in at 12ms)", e)
		}
	})
}

// sleepFor is a service that takes req milliseconds to answer.
var sleepFor = tower.ServiceFunc[int, int](func(_ context.Context, ms int) (int, error) {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return ms, nil
})

// A probe the algorithm asks for starts with the next window: the limit
// in force falls to a quarter of the algorithm's (at least 3), a call
// that started before the probe and ends in it does not count in it, and
// once the probe has timed its calls, the algorithm's limit is in force.
func TestProbeAfterAWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := &prober{probeAfter: map[int]bool{1: true}}
		alg.script.next = []float64{20, 8}
		l := adaptive.New[int, int](sleepFor, just(alg), adaptive.WithWindow(time.Second, 1), adaptive.WithReserve(0))
		svc := tower.Service[int, int](l)
		tower.Call(t.Context(), svc, 5) // 0 to 5ms: the first probe; the limit 20
		long := towertest.GoRequest(t.Context(), svc, 1000)
		time.Sleep(995 * time.Millisecond)
		before := towertest.GoRequest(t.Context(), svc, 15) // 1s to 1.015s
		long.Wait()                                         // 1.005s: the window ends; a probe at 8/4, so 3
		if n := l.Limit(); n != 3 {
			t.Fatalf("limit in the probe %d, want 3", n)
		}
		var probed []*towertest.Outcome[int]
		for range 3 {
			probed = append(probed, towertest.GoRequest(t.Context(), svc, 20))
			time.Sleep(time.Millisecond)
		}
		if n, w := l.InFlight(), l.Waiting(); n != 3 || w != 1 {
			t.Fatalf("in flight %d, waiting %d, want 3 and 1", n, w)
		}
		before.Wait() // 1.015s: ends in the probe, not counted; the waiter goes in
		for _, p := range probed {
			p.Wait()
		}
		if len(alg.samples) != 3 {
			t.Fatalf("%d windows, want 3", len(alg.samples))
		}
		want := adaptive.Sample{Timed: 1, MeanLatency: 20 * time.Millisecond, MinLatency: 20 * time.Millisecond,
			MaxInFlight: 2, Blocked: 1, Probe: true, Elapsed: 20 * time.Millisecond}
		if got := alg.samples[2]; got != want {
			t.Errorf("probe sample %+v, want %+v", got, want)
		}
		if n := l.Limit(); n != 8 {
			t.Errorf("limit after the probe %d, want 8, the algorithm's", n)
		}
	})
}

// A call's latency runs from when it leaves the limiter: a request that
// waited 500ms in the limiter's queue and took 10ms in the service counts
// 10ms.
func TestQueueIsNotLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := &script{}
		l := adaptive.New[int, int](sleeper(10*time.Millisecond), just(alg), adaptive.WithInitial(1), adaptive.WithWindow(time.Nanosecond, 1))
		held, _ := l.Ready(t.Context())
		queued := towertest.GoRequest(t.Context(), tower.Service[int, int](l), 0)
		time.Sleep(500 * time.Millisecond)
		held.Release()
		queued.Wait()
		if queued.Elapsed() != 510*time.Millisecond {
			t.Fatalf("answered after %v, want 510ms", queued.Elapsed())
		}
		if len(alg.samples) != 1 || alg.samples[0].MeanLatency != 10*time.Millisecond {
			t.Errorf("samples %+v, want one of 10ms", alg.samples)
		}
	})
}

// A drop that came when the caller's own ctx had ended is the caller's
// deadline, not the service's, unless the call had at least twice the
// service's typical latency (10ms here, from the first window): cut short
// at 19ms it is not counted, at 20ms it is. A timeout of the service's
// own, with the caller still there, always is.
func TestCallerDeadlineIsNotADrop(t *testing.T) {
	slow := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		if req == 0 {
			time.Sleep(10 * time.Millisecond)
			return 0, nil
		}
		<-ctx.Done()
		return 0, ctx.Err()
	})
	drops := func(alg *script) int {
		n := 0
		for _, s := range alg.samples {
			n += s.Dropped
		}
		return n
	}
	for _, c := range []struct {
		deadline time.Duration
		dropped  int
	}{{19 * time.Millisecond, 0}, {20 * time.Millisecond, 1}} {
		synctest.Test(t, func(t *testing.T) {
			alg := &script{}
			l := adaptive.New[int, int](slow, just(alg), adaptive.WithWindow(time.Nanosecond, 1))
			tower.Call(t.Context(), tower.Service[int, int](l), 0) // typical: 10ms
			ctx, cancel := context.WithTimeout(t.Context(), c.deadline)
			defer cancel()
			tower.Call(ctx, tower.Service[int, int](l), 1)
			if n := drops(alg); n != c.dropped {
				t.Errorf("cut short at %v: %d drops counted, want %d", c.deadline, n, c.dropped)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		alg := &script{}
		l := adaptive.New[int, int](timeout.New[int, int](slow, 15*time.Millisecond), just(alg), adaptive.WithWindow(time.Nanosecond, 1))
		tower.Call(t.Context(), tower.Service[int, int](l), 0)
		if _, err := tower.Call(t.Context(), tower.Service[int, int](l), 1); !tower.IsTimeout(err) {
			t.Fatalf("got %v, want the Timeout's", err)
		}
		if n := drops(alg); n != 1 {
			t.Errorf("the service's own timeout: %d drops counted, want 1", n)
		}
	})
}

// A waiter granted a permit with less time left before its deadline than
// the service's typical latency is refused at once, with a permit whose
// Call fails with loadshed.ErrOverloaded and counts as Shed, and the
// permit goes to the next waiter. (WithWaitToDeadline, so that the waiter
// waits for the permit: the wait bound would refuse it at 20ms.)
func TestLateWaiterRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var counts metrics.Counts
		l := adaptive.New[int, int](sleeper(10*time.Millisecond), hold, adaptive.WithInitial(1), adaptive.WithBounds(1, 1), adaptive.WithWindow(time.Nanosecond, 1),
			adaptive.WithMetrics(&counts), adaptive.WithWaitToDeadline())
		svc := tower.Service[int, int](l)
		tower.Call(t.Context(), svc, 0) // typical: 10ms
		held, _ := l.Ready(t.Context())
		ctx, cancel := context.WithTimeout(t.Context(), 59*time.Millisecond)
		defer cancel()
		late := towertest.GoRequest(ctx, svc, 1)
		next := towertest.GoRequest(t.Context(), svc, 2)
		time.Sleep(50 * time.Millisecond)
		held.Release() // 9ms left for the first waiter: refused
		late.ExpectError(t, loadshed.ErrOverloaded)
		if late.Elapsed() != 50*time.Millisecond {
			t.Errorf("the late waiter answered after %v, want 50ms", late.Elapsed())
		}
		next.ExpectValue(t, 2)
		if next.Elapsed() != 60*time.Millisecond {
			t.Errorf("the next waiter answered after %v, want 60ms (the permit at 50ms)", next.Elapsed())
		}
		if n := counts.Get(metrics.Shed); n != 1 {
			t.Errorf("Shed %d, want 1", n)
		}
	})
}

// WithOwnDelay's function is read at each window's end, and what it says,
// up to the window's mean latency, is the Sample's OwnDelay.
func TestOwnDelayInSample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := &script{}
		reads := 0
		own := []time.Duration{3 * time.Millisecond, time.Hour, -time.Second}
		l := adaptive.New[int, int](sleeper(10*time.Millisecond), just(alg), adaptive.WithWindow(time.Nanosecond, 1),
			adaptive.WithOwnDelay(func() time.Duration { reads++; return own[reads-1] }))
		for range 3 {
			tower.Call(t.Context(), tower.Service[int, int](l), 0)
		}
		var got []time.Duration
		for _, s := range alg.samples {
			got = append(got, s.OwnDelay)
		}
		if want := []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 0}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("OwnDelay %v, want %v (clamped to the mean and to 0)", got, want)
		}
	})
}
