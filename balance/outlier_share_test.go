package balance_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/load"
	towermetrics "github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// At most the share of the endpoints is out at once, rounded down, but at
// least one, and never the last one in. With everything failing, one of
// five is out (10% of 5 still lets one out) and requests still go to the
// four others, which answer with their failures; when its time is up,
// another failing endpoint takes its place at its next failure.
func TestOutlierMaxShare(t *testing.T) {
	for _, tt := range []struct {
		name    string
		n       int
		failing []int
		share   float64
		want    int // ejected at once
	}{
		{"TwentyPercentOfTen", 10, []int{6, 7, 8, 9}, 0.2, 2},
		{"TwentyNinePercentOfHundred", 100, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.29, 10},
		{"TenPercentOfFiveIsOne", 5, []int{3, 4}, 0.1, 1},
		{"ZeroIsOne", 5, []int{3, 4}, 0, 1},
		{"AllFailing", 5, []int{0, 1, 2, 3, 4}, 0.1, 1},
		{"NeverTheLastOne", 1, []int{0}, 1, 0},
		{"AllButOne", 3, []int{0, 1, 2}, 1, 2},
	} {
		for _, kind := range kinds {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					fs := fleet(tt.n)
					for _, i := range tt.failing {
						fs[i].set(true)
					}
					rec, counts := newEjections(), &towermetrics.Counts{}
					bal := newBalancer(kind, fs, balance.WithOutlierDetection(isFailure, balance.MaxEjectedShare(tt.share)),
						balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
					defer bal.Close()
					calls := func() (n int) {
						for _, i := range tt.failing {
							n += fs[i].Calls()
						}
						return n
					}
					callUntil(t, bal, func() bool { return calls() >= 5*len(tt.failing) })
					callN(t, bal, 20*tt.n)
					checkOut(t, bal, counts, tt.n-tt.want, tt.want)
					if got := rec.len(); got != tt.want {
						t.Errorf("got %d ejections, want %d", got, tt.want)
					}
					if tt.want == 0 || tt.want == len(tt.failing) {
						return
					}
					// Requests still reach the failing endpoints left in.
					before := calls()
					callN(t, bal, 20*tt.n)
					if calls() == before {
						t.Error("no request reached the failing endpoints left in")
					}
					time.Sleep(30 * time.Second)
					callN(t, bal, 20*tt.n)
					checkOut(t, bal, counts, tt.n-tt.want, tt.want)
					if got := rec.len(); got != 2*tt.want {
						t.Errorf("got %d ejections after the first came back, want %d", got, 2*tt.want)
					}
				})
			})
		}
	}
}

// An ejected endpoint that leaves the set frees its place in the share:
// the metric goes down, and another endpoint refused for the share is
// ejected at its next failure. The removal handler gets the endpoint the
// Discover gave, not a wrapper.
func TestOutlierRemovedFreesShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[3].set(true)
		fs[4].set(true)
		d := make(scripted)
		rec, counts := newEjections(), &towermetrics.Counts{}
		removed := make(chan endpoint, len(fs))
		bal := balance.NewP2C(d, balance.WithRand(newRand(1)), balance.WithOutlierDetection(isFailure),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts),
			balance.WithRemovalHandler(func(_ int, svc endpoint) { removed <- svc }))
		defer bal.Close()
		eps := make([]endpoint, len(fs))
		for i, f := range fs {
			eps[i] = load.NewConstant[string, string](tower.ServiceFunc[string, string](f.call), 0)
			d <- insert(i, eps[i])
		}
		callUntil(t, bal, func() bool { return fs[3].Calls() >= 5 && fs[4].Calls() >= 5 })
		checkOut(t, bal, counts, 4, 1)
		out := rec.key(0)
		rec.check(t, fmt.Sprintf("0s: load balancer ejected endpoint %d for 30s: consecutive failures: boom", out))

		d <- remove(out)
		synctest.Wait()
		if got := <-removed; got != eps[out] {
			t.Errorf("the removal handler got %v, want the endpoint the Discover gave", got)
		}
		checkOut(t, bal, counts, 4, 0)
		callUntil(t, bal, func() bool { return rec.len() == 2 })
		checkOut(t, bal, counts, 3, 1)
		if got, want := rec.key(1), 7-out; got != want {
			t.Errorf("got endpoint %d ejected second, want %d", got, want)
		}
		if got := bal.Len(); got != 4 {
			t.Errorf("got Len() = %d, want 4", got)
		}
	})
}

// The first endpoint of the set, ejected, frees its place in the share
// too when it leaves: the metric goes down, and another endpoint is
// ejected at its next failure.
func TestOutlierFirstRemovedFreesShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[0].set(true)
		d := make(scripted)
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := balance.NewP2C(d, balance.WithRand(newRand(1)), balance.WithOutlierDetection(isFailure),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		for i, f := range fs {
			d <- insert(i, load.NewConstant[string, string](tower.ServiceFunc[string, string](f.call), 0))
		}
		callUntil(t, bal, func() bool { return rec.len() == 1 })
		checkOut(t, bal, counts, 4, 1)
		d <- remove(0)
		checkOut(t, bal, counts, 4, 0)
		fs[4].set(true)
		callUntil(t, bal, func() bool { return rec.len() == 2 })
		checkOut(t, bal, counts, 3, 1)
		rec.check(t,
			"0s: load balancer ejected endpoint 0 for 30s: consecutive failures: boom",
			"0s: load balancer ejected endpoint 4 for 30s: consecutive failures: boom")
	})
}

// An endpoint that has left the set is not ejected: a call to it that
// was under way when it left, and fails after, makes the count of
// consecutive failures (1 here) but ejects nothing, though the share
// would let one of the two left out.
func TestOutlierRemovedNotEjected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, hx := constMock(-1, 0) // the only one ready: picked
		y, _ := constMock(0, 0)
		z, _ := constMock(0, 0)
		d := make(scripted)
		rec, counts := newEjections(), &towermetrics.Counts{}
		removed := make(chan int, 2)
		bal := balance.NewP2C(d, balance.WithRand(newRand(1)),
			balance.WithOutlierDetection(isFailure, balance.ConsecutiveFailures(1)),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts),
			balance.WithRemovalHandler(func(k int, _ endpoint) { removed <- k }))
		defer bal.Close()
		d <- insert(0, x)
		d <- insert(1, y)
		d <- insert(2, z)
		call := towertest.GoCall(context.Background(), readySettled(t, bal), "x")
		r := hx.ExpectSettled(t, "x")
		d <- remove(0)
		synctest.Wait()
		select {
		case k := <-removed:
			if k != 0 {
				t.Fatalf("got endpoint %d removed, want 0", k)
			}
		default:
			t.Fatal("endpoint 0 was not removed while its call was under way")
		}
		r.Fail(errFail)
		call.ExpectError(t, errFail)
		checkOut(t, bal, counts, 0, 0)
		rec.check(t)
	})
}

// An endpoint that is ready, its permit held by the balancer, when it is
// ejected stops being picked at once: the permit is given back to it. The
// result of a call made with a permit taken before the ejection does not
// count, and the endpoint comes back with a count of zero.
func TestOutlierReadyEndpointEjectedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, hx := constMock(-1, 0) // the less loaded: picked while ready
		y, hy := constMock(-1, 1)
		counts := &towermetrics.Counts{}
		bal := balance.NewP2C(list(x, y), balance.WithRand(newRand(1)),
			balance.WithOutlierDetection(isFailure), balance.WithMetrics(counts))
		defer bal.Close()
		var ps [6]permit
		for i := range ps {
			ps[i] = readySettled(t, bal)
		}
		hx.ExpectOutstanding(t, 7) // 6 taken, 1 held
		fail := func(p permit) {
			t.Helper()
			call := towertest.GoCall(context.Background(), p, "x")
			hx.ExpectSettled(t, "x").Fail(errFail)
			call.ExpectError(t, errFail)
		}
		for i := range 4 {
			fail(ps[i])
		}
		checkOut(t, bal, counts, 2, 0)
		fail(ps[4])
		hx.ExpectOutstanding(t, 1) // ps[5]: the held one was given back
		checkOut(t, bal, counts, 1, 1)
		towertest.CallThrough(t, readySettled(t, bal), hy, "y", "ok")

		fail(ps[5]) // taken before the ejection: not counted
		time.Sleep(30 * time.Second)
		checkOut(t, bal, counts, 2, 0)
		for range 4 {
			fail(readySettled(t, bal))
		}
		checkOut(t, bal, counts, 2, 0)
	})
}

// Close lets go of an ejected endpoint: the metric comes back to zero and
// the goroutine waiting for its return ends (synctest fails a test that
// leaves one).
func TestOutlierClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[1].set(true)
		counts := &towermetrics.Counts{}
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure), balance.WithMetrics(counts))
		callUntil(t, bal, func() bool { return counts.Get(towermetrics.Ejected) == 1 })
		bal.Close()
		if got := counts.Get(towermetrics.Ejected); got != 0 {
			t.Errorf("got Ejected = %d after Close, want 0", got)
		}
	})
}

// Bad input panics, naming the parameter.
func TestOutlierBadInput(t *testing.T) {
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"balance.WithOutlierDetection: nil failure classifier", func() { balance.WithOutlierDetection[string](nil) }},
		{"balance.WithOutlierDetection: option 1 is nil", func() { balance.WithOutlierDetection(isFailure, balance.OutlierInterval(time.Second), nil) }},
		{"balance.WithOutlierDetection: MaxEjectionTime 10s is shorter than BaseEjectionTime 30s", func() {
			balance.WithOutlierDetection(isFailure, balance.MaxEjectionTime(10*time.Second))
		}},
		{"balance.ConsecutiveFailures: n is -1, want 0 (off) or more", func() { balance.ConsecutiveFailures(-1) }},
		{"balance.OutlierInterval: d is 0s, want more than 0", func() { balance.OutlierInterval(0) }},
		{"balance.BaseEjectionTime: d is -1s, want more than 0", func() { balance.BaseEjectionTime(-time.Second) }},
		{"balance.BaseEjectionTime: d is 0s, want more than 0", func() { balance.BaseEjectionTime(0) }},
		{"balance.MaxEjectionTime: d is 0s, want more than 0", func() { balance.MaxEjectionTime(0) }},
		{"balance.MaxEjectedShare: r is 1.5, want a ratio in [0, 1]", func() { balance.MaxEjectedShare(1.5) }},
		{"balance.MaxEjectedShare: r is -0.1, want a ratio in [0, 1]", func() { balance.MaxEjectedShare(-0.1) }},
		{"balance.MaxEjectedShare: r is NaN, want a ratio in [0, 1]", func() { balance.MaxEjectedShare(nan()) }},
		{"balance.SuccessRateMinHosts: n is -2, want 0 (off) or more", func() { balance.SuccessRateMinHosts(-2) }},
		{"balance.SuccessRateRequestVolume: n is 0, want 1 or more", func() { balance.SuccessRateRequestVolume(0) }},
		{"balance.SuccessRateStdevFactor: f is 0, want a finite number more than 0", func() { balance.SuccessRateStdevFactor(0) }},
		{"balance.SuccessRateStdevFactor: f is +Inf, want a finite number more than 0", func() { balance.SuccessRateStdevFactor(inf()) }},
		{"balance.SuccessRateStdevFactor: f is NaN, want a finite number more than 0", func() { balance.SuccessRateStdevFactor(nan()) }},
		{"balance.WithMetrics: nil sink", func() { balance.WithMetrics(nil) }},
		{"balance.WithMetrics: nil sink", func() { balance.WithMetrics((*towermetrics.Counts)(nil)) }},
		{"balance.NewP2C: the outlier detection's classifier is a func(int, error) bool, want a func(string, error) bool", func() {
			balance.NewP2C(list(echoEndpoint()), balance.WithOutlierDetection(func(int, error) bool { return false }))
		}},
		{"balance.NewRoundRobin: the outlier detection's classifier is a func(int, error) bool, want a func(string, error) bool", func() {
			balance.NewRoundRobin(list2(echo), balance.WithOutlierDetection(func(int, error) bool { return false }))
		}},
	} {
		towertest.Panics(t, tt.want, tt.f)
	}
}

// The boundaries of the parameters are accepted.
func TestOutlierParameterBounds(t *testing.T) {
	balance.WithOutlierDetection(isFailure,
		balance.ConsecutiveFailures(0), balance.MaxEjectedShare(0), balance.MaxEjectedShare(1),
		balance.SuccessRateMinHosts(0), balance.SuccessRateRequestVolume(1),
		balance.BaseEjectionTime(time.Nanosecond), balance.MaxEjectionTime(time.Nanosecond),
		balance.OutlierInterval(time.Nanosecond), balance.SuccessRateStdevFactor(1e-9))
	balance.SuccessRateStdevFactor(math.MaxFloat64)
}

// A request through a P2C with outlier detection, to healthy endpoints,
// allocates nothing, Ready and Call together: the permit's record comes
// from a pool.
func TestOutlierHotPathDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	bal := balance.NewP2C(list(echoEndpoint(), echoEndpoint(), echoEndpoint()),
		balance.WithOutlierDetection(isFailure), balance.WithMetrics(&towermetrics.Counts{}))
	defer bal.Close()
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := tower.Call(ctx, bal, "x"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a request allocates %v times, want 0", n)
	}
}
