package balance_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/balance"
	towermetrics "github.com/towergo/tower/metrics"
)

// With 5 endpoints and the defaults, an endpoint that fails everything is
// ejected at exactly its 5th consecutive failure and not picked for
// exactly 30s; ejected again at once, it is out for 60s; one interval
// (10s) in takes its multiplier down by one, so the next is 60s again, and
// two intervals in take it back to 30s.
func TestOutlierConsecutiveFailures(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fs := fleet(5)
				bad := fs[4]
				bad.set(true)
				rec, counts := newEjections(), &towermetrics.Counts{}
				bal := newBalancer(kind, fs, balance.WithOutlierDetection(isFailure),
					balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
				defer bal.Close()

				callUntil(t, bal, func() bool { return bad.Calls() == 4 })
				checkOut(t, bal, counts, 5, 0)
				callUntil(t, bal, func() bool { return bad.Calls() == 5 })
				rec.check(t, "0s: load balancer ejected endpoint 4 for 30s: consecutive failures: boom")
				checkOut(t, bal, counts, 4, 1)

				outFor := func(d time.Duration, calls int) {
					t.Helper()
					callN(t, bal, 50)
					time.Sleep(d - time.Millisecond)
					callN(t, bal, 50)
					checkOut(t, bal, counts, 4, 1)
					if got := bad.Calls(); got != calls {
						t.Errorf("the ejected endpoint got %d calls, want %d", got, calls)
					}
					time.Sleep(time.Millisecond)
					checkOut(t, bal, counts, 5, 0)
				}
				outFor(30*time.Second, 5)

				callUntil(t, bal, func() bool { return bad.Calls() == 10 })
				outFor(60*time.Second, 10)

				time.Sleep(10 * time.Second) // one interval in: 2 -> 1
				callUntil(t, bal, func() bool { return bad.Calls() == 15 })
				outFor(60*time.Second, 15)

				time.Sleep(20 * time.Second) // two intervals in: 2 -> 0
				callUntil(t, bal, func() bool { return bad.Calls() == 20 })
				outFor(30*time.Second, 20)

				rec.check(t,
					"0s: load balancer ejected endpoint 4 for 30s: consecutive failures: boom",
					"30s: load balancer ejected endpoint 4 for 1m0s: consecutive failures: boom",
					"1m40s: load balancer ejected endpoint 4 for 1m0s: consecutive failures: boom",
					"3m0s: load balancer ejected endpoint 4 for 30s: consecutive failures: boom",
				)
			})
		})
	}
}

// Back to back, ejections grow by the base time up to the maximum.
func TestOutlierMaxEjectionTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[0].set(true)
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := newBalancer("P2C", fs, balance.WithOutlierDetection(isFailure,
			balance.BaseEjectionTime(time.Second), balance.MaxEjectionTime(2500*time.Millisecond)),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		for i := range 4 {
			callUntil(t, bal, func() bool { return rec.len() == i+1 })
			checkOut(t, bal, counts, 4, 1)
			time.Sleep(min(time.Duration(i+1)*time.Second, 2500*time.Millisecond))
			checkOut(t, bal, counts, 5, 0)
		}
		rec.check(t,
			"0s: load balancer ejected endpoint 0 for 1s: consecutive failures: boom",
			"1s: load balancer ejected endpoint 0 for 2s: consecutive failures: boom",
			"3s: load balancer ejected endpoint 0 for 2.5s: consecutive failures: boom",
			"5.5s: load balancer ejected endpoint 0 for 2.5s: consecutive failures: boom",
		)
	})
}

// At the maximum the multiplier stops growing: with a base of 1s and a
// maximum of 2s, back-to-back ejections last 1s, 2s and 2s, and two
// intervals (20s) in after the last take the multiplier from 2 to 0, so
// the next ejection lasts 1s again (from 3, it would still last 2s).
func TestOutlierMultiplierStopsAtMax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[0].set(true)
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := newBalancer("P2C", fs, balance.WithOutlierDetection(isFailure, balance.SuccessRateMinHosts(0),
			balance.BaseEjectionTime(time.Second), balance.MaxEjectionTime(2*time.Second)),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		for i, out := range []time.Duration{time.Second, 2 * time.Second, 2 * time.Second} {
			callUntil(t, bal, func() bool { return rec.len() == i+1 })
			time.Sleep(out)
			checkOut(t, bal, counts, 5, 0)
		}
		time.Sleep(20 * time.Second)
		callUntil(t, bal, func() bool { return rec.len() == 4 })
		checkOut(t, bal, counts, 4, 1)
		rec.check(t,
			"0s: load balancer ejected endpoint 0 for 1s: consecutive failures: boom",
			"1s: load balancer ejected endpoint 0 for 2s: consecutive failures: boom",
			"3s: load balancer ejected endpoint 0 for 2s: consecutive failures: boom",
			"25s: load balancer ejected endpoint 0 for 1s: consecutive failures: boom",
		)
	})
}

// With ConsecutiveFailures(0) that detector is off: an endpoint that
// fails 20 calls in a row is not ejected.
func TestOutlierConsecutiveFailuresOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[0].set(true)
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure, balance.ConsecutiveFailures(0)),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		callN(t, bal, 100)
		if got := fs[0].Calls(); got != 20 {
			t.Errorf("the failing endpoint got %d calls, want 20", got)
		}
		checkOut(t, bal, counts, 5, 0)
		rec.check(t)
	})
}

// A success starts the count of consecutive failures again: 4 failures, a
// success and 4 failures eject nothing; the next failure does.
func TestOutlierSuccessResetsCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		bad := fs[2]
		bad.script = []bool{true, true, true, true, false, true, true, true, true}
		bad.set(true)
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := newBalancer("P2C", fs, balance.WithOutlierDetection(isFailure),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		callUntil(t, bal, func() bool { return bad.Calls() == 9 })
		checkOut(t, bal, counts, 5, 0)
		callUntil(t, bal, func() bool { return bad.Calls() == 10 })
		checkOut(t, bal, counts, 4, 1)
		rec.check(t, "0s: load balancer ejected endpoint 2 for 30s: consecutive failures: boom")
	})
}

// With the defaults, an endpoint that fails one call in two among four
// that fail none is a success-rate outlier (0.5 < 0.9 - 1.9*0.2) once
// each has ended 100 calls in the interval: it is ejected at the
// interval's end, exactly 10s after the balancer was made, and not
// before. With one call too few for it, or with one endpoint too few of
// the volume, nothing is ejected.
func TestOutlierSuccessRate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		calls int // round robin: 100 each for 500
		opts  []balance.OutlierOption
		want  []string
	}{
		{"Ejected", 500, nil, []string{"10s: load balancer ejected endpoint 4 for 30s: success rate 0.5 below 0.52"}},
		{"OneRequestTooFew", 499, nil, nil},
		{"OneHostTooFew", 500, []balance.OutlierOption{balance.SuccessRateMinHosts(6)}, nil},
		{"Off", 500, []balance.OutlierOption{balance.SuccessRateMinHosts(0)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fs := fleet(5)
				fs[4].alternate = true
				rec, counts := newEjections(), &towermetrics.Counts{}
				bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure, tt.opts...),
					balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
				defer bal.Close()
				callN(t, bal, tt.calls-1)
				time.Sleep(10*time.Second - time.Millisecond)
				callN(t, bal, 1) // ends within the interval
				checkOut(t, bal, counts, 5, 0)
				time.Sleep(time.Millisecond)
				want := len(tt.want)
				checkOut(t, bal, counts, 5-want, want)
				rec.check(t, tt.want...)
				if want == 0 {
					return
				}
				time.Sleep(30*time.Second - time.Millisecond)
				checkOut(t, bal, counts, 4, 1)
				time.Sleep(time.Millisecond)
				checkOut(t, bal, counts, 5, 0)
			})
		})
	}
}

// An endpoint is an outlier only below the threshold: with equal success
// rates there is no deviation, the threshold is the rate itself, and
// nobody is ejected, whether all fail one call in two or none.
func TestOutlierSuccessRateEqual(t *testing.T) {
	for _, tt := range []struct {
		name      string
		alternate bool
	}{{"AllHalf", true}, {"AllOne", false}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fs := fleet(5)
				for _, f := range fs {
					f.alternate = tt.alternate
				}
				rec, counts := newEjections(), &towermetrics.Counts{}
				bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure),
					balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
				defer bal.Close()
				callN(t, bal, 500)
				time.Sleep(10 * time.Second)
				checkOut(t, bal, counts, 5, 0)
				rec.check(t)
			})
		})
	}
}

// The success rates of an interval are those of the calls that ended in
// it: counts start again at each interval, so 100 calls spread over two
// intervals are not the volume.
func TestOutlierSuccessRateWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[4].alternate = true
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		callN(t, bal, 250)
		time.Sleep(10 * time.Second) // the first interval ends: 50 each
		synctest.Wait()
		callN(t, bal, 250)
		time.Sleep(10 * time.Second) // the second: 50 each
		checkOut(t, bal, counts, 5, 0)
		callN(t, bal, 500)
		time.Sleep(10 * time.Second) // the third: 100 each
		checkOut(t, bal, counts, 4, 1)
		rec.check(t, "30s: load balancer ejected endpoint 4 for 30s: success rate 0.5 below 0.52")
	})
}

// An interval in which no call ends is not evaluated, and the next
// interval to have calls is judged on its own: the intervals stay aligned
// on the balancer's construction.
func TestOutlierSuccessRateAfterIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[4].alternate = true
		rec, counts := newEjections(), &towermetrics.Counts{}
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure),
			balance.WithErrorHandler(rec.add), balance.WithMetrics(counts))
		defer bal.Close()
		time.Sleep(25 * time.Second)
		callN(t, bal, 500)
		time.Sleep(5*time.Second - time.Millisecond)
		checkOut(t, bal, counts, 5, 0)
		time.Sleep(time.Millisecond)
		checkOut(t, bal, counts, 4, 1)
		rec.check(t, "30s: load balancer ejected endpoint 4 for 30s: success rate 0.5 below 0.52")
	})
}
