package limit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// The inner service failing, panicking, or not ready before ctx ends
// gives the token back.
func TestBucketInnerFailureGivesTokenBack(t *testing.T) {
	t.Run("ReadyError", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			mock, h := towertest.NewMock[string, string]()
			b := limit.NewBucket[string, string](mock, 10, time.Second, 1)
			broken := errors.New("broken")
			h.FailReady(broken)
			if _, err := b.Ready(t.Context()); err != broken {
				t.Fatalf("Ready: got %v, want %v", err, broken)
			}
			p, ok := towertest.ReadyNow(t, b)
			if !ok {
				t.Fatal("ReadyNow after the inner failure: got not ready, want the token back")
			}
			p.Release()
		})
	})
	t.Run("ReadyPanics", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := limit.NewBucket[string, string](panicReady{}, 10, time.Second, 1)
			start := time.Now()
			for range 2 {
				towertest.Panics(t, "inner Ready exploded", func() { b.Ready(t.Context()) })
			}
			if d := time.Since(start); d != 0 {
				t.Errorf("the second Ready waited %v for a token, want 0: the first one's was not given back", d)
			}
		})
	})
	t.Run("ContextEndsWaitingForInner", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			mock, h := towertest.NewMock[string, string]()
			b := limit.NewBucket[string, string](mock, 10, time.Second, 1)
			h.Allow(0)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
			defer cancel()
			if _, err := b.Ready(ctx); err != context.DeadlineExceeded {
				t.Fatalf("Ready: got %v, want %v", err, context.DeadlineExceeded)
			}
			h.AllowAll()
			p, ok := towertest.ReadyNow(t, b)
			if !ok {
				t.Fatal("ReadyNow at 30ms after a caller gave up: got not ready, want the token back")
			}
			p.Release()
		})
	})
}

// waitSink panics when Waiting moves by delta.
type waitSink struct{ delta int64 }

func (s waitSink) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting && delta == s.delta {
		panic("sink exploded")
	}
}
func (waitSink) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as a wait begins or ends: the panic goes on up to the
// caller, which holds nothing after it: not a place in the queue, not a
// token.
func TestBucketPanickingSinkGivesEverythingBack(t *testing.T) {
	t.Run("WaitBegins", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := limit.NewBucket(echo, 10, time.Second, 1, limit.WithMetrics(waitSink{+1}))
			start := time.Now()
			callNow(t, b, "now")
			towertest.Panics(t, "sink exploded", func() { b.Ready(t.Context()) })
			// It took nothing, so gives nothing back.
			if n := countNow(t, b); n != 0 {
				t.Errorf("at 0ms: %d tokens, want 0", n)
			}
			sleepUntil(start, 100*time.Millisecond)
			// Still queued, it would be served first: the probe would fail.
			if n := countNow(t, b); n != 1 {
				t.Errorf("at 100ms: %d tokens, want 1", n)
			}
		})
	})
	for _, tt := range []struct {
		name     string
		deadline time.Duration // of the waiter's ctx
	}{
		{"WaitEndsGranted", time.Hour},
		{"WaitEndsCancelled", 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := limit.NewBucket(echo, 10, time.Second, 1, limit.WithMetrics(waitSink{-1}))
				start := time.Now()
				callNow(t, b, "now")
				ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
				defer cancel()
				r := towertest.Go(func() (v any, err error) {
					defer func() { v = recover() }()
					b.Ready(ctx)
					return nil, nil
				})
				if v, _ := r.Wait(); v != "sink exploded" {
					t.Fatalf("the waiter got panic %v, want the sink's", v)
				}
				if end := min(tt.deadline, 100*time.Millisecond); r.Since(start) != end {
					t.Errorf("the wait ended at %v, want %v", r.Since(start), end)
				}
				// Cancelled at 50ms, it took nothing and gives nothing back.
				if tt.deadline < 100*time.Millisecond {
					if n := countNow(t, b); n != 0 {
						t.Errorf("at %v: %d tokens, want 0", time.Since(start), n)
					}
				}
				sleepUntil(start, 100*time.Millisecond)
				if n := countNow(t, b); n != 1 {
					t.Errorf("at 100ms: %d tokens, want 1", n)
				}
			})
		})
	}
}

// Each service a layer wraps has a bucket of its own, full.
func TestBucketLayerBucketPerService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := limit.NewBucketLayer[string, string](10, time.Second, 2)
		s1, s2 := l.Wrap(echo), l.Wrap(echo)
		if n1, n2 := countNow(t, s1), countNow(t, s2); n1 != 2 || n2 != 2 {
			t.Errorf("got %d and %d tokens at once, want 2 each", n1, n2)
		}
	})
}

// A Bucket whose period is math.MaxInt64 gives its burst, then never
// another token: a caller that finds none is refused if it probes, and
// waits until its ctx ends otherwise. Run in a synctest bubble, whose
// readings are far from the process's, and outside one.
func TestBucketHugePeriod(t *testing.T) {
	for _, tt := range []struct {
		name string
		svc  func() tower.Service[string, string]
	}{
		{"NewBucket", func() tower.Service[string, string] { return limit.NewBucket(echo, 1, math.MaxInt64, 1) }},
		{"NewBucketLayer", func() tower.Service[string, string] {
			return limit.NewBucketLayer[string, string](1, math.MaxInt64, 1).Wrap(echo)
		}},
	} {
		t.Run(tt.name+"/RealClock", func(t *testing.T) { givesOne(t, tt.svc()) })
		t.Run(tt.name+"/Bubble", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc := tt.svc()
				givesOne(t, svc)
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), 10000*time.Hour)
				defer cancel()
				p, err := svc.Ready(ctx)
				p.Release()
				if at := time.Since(start); err != context.DeadlineExceeded || at != 10000*time.Hour {
					t.Errorf("a second Ready: got %v at %v, want %v at 10000h", err, at, context.DeadlineExceeded)
				}
			})
		})
	}
}

// givesOne fails t unless svc, a Bucket of 1 per math.MaxInt64 with burst
// 1, grants its one token, refuses a done ctx, and makes a caller with a
// live ctx wait until that ctx ends.
func givesOne(t *testing.T, svc tower.Service[string, string]) {
	t.Helper()
	callNow(t, svc, "first")
	if p, ok := towertest.ReadyNow(t, svc); ok {
		p.Release()
		t.Fatal("second ReadyNow: got a token, want none")
	}
	ctx, cancel := context.WithCancel(t.Context())
	waiter := towertest.Go(func() (permit, error) { return svc.Ready(ctx) })
	cancel()
	if p, err := waiter.Wait(); err != context.Canceled {
		p.Release()
		t.Fatalf("a waiting Ready: got %v, want %v", err, context.Canceled)
	}
}

// Waiting counts the callers in line for a token: not one that finds a
// token, not a refused probe, and not a waiter once its ctx has ended.
func TestBucketMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		b := limit.NewBucketLayer[string, string](10, time.Second, 1, limit.WithMetrics(&c)).Wrap(echo)
		start := time.Now()
		wait := callAll(t, b, start, "a", "b", "c")
		countsAt(t, start, 0, &c, metrics.Snapshot{Waiting: 2})
		countsAt(t, start, 99*time.Millisecond, &c, metrics.Snapshot{Waiting: 2})
		countsAt(t, start, 100*time.Millisecond, &c, metrics.Snapshot{Waiting: 1})
		countsAt(t, start, 200*time.Millisecond, &c, metrics.Snapshot{})
		if got, want := fmt.Sprint(wait()), "[0s 100ms 200ms]"; got != want {
			t.Errorf("answered at %s, want %s", got, want)
		}
		if _, ok := towertest.ReadyNow(t, b); ok {
			t.Fatal("ReadyNow at 200ms: got ready, want not ready")
		}
		countsAt(t, start, 200*time.Millisecond, &c, metrics.Snapshot{})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		r := towertest.GoReady(ctx, b)
		countsAt(t, start, 249*time.Millisecond, &c, metrics.Snapshot{Waiting: 1})
		r.ExpectError(t, context.DeadlineExceeded)
		countsAt(t, start, 250*time.Millisecond, &c, metrics.Snapshot{})
	})
}

// The request path allocates nothing when a token is there: Ready and
// Call, with a sink or without, and Ready and Release.
func TestBucketDoesNotAllocate(t *testing.T) {
	newBucket := func(opts ...limit.Option) *limit.Bucket[int, int] {
		return limit.NewBucket(echoInt, 1_000_000, time.Millisecond, 1<<20, opts...)
	}
	ctx := t.Context()
	call := func(b *limit.Bucket[int, int]) func() {
		return func() {
			if _, err := tower.Call(ctx, b, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	plain := newBucket()
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"Call", call(plain)},
		{"CallMetrics", call(newBucket(limit.WithMetrics(new(metrics.Counts))))},
		{"Release", func() {
			p, err := plain.Ready(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p.Release()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if allocs := testing.AllocsPerRun(1000, tt.f); allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
		})
	}
}

func TestBucketBadInputPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NilInner", func() { limit.NewBucket[string, string](nil, 1, time.Second, 1) }, "limit.NewBucket: inner is nil"},
		{"TypedNilInner", func() { limit.NewBucket[string, string]((*towertest.Mock[string, string])(nil), 1, time.Second, 1) }, "limit.NewBucket: inner is nil"},
		{"NilServiceFunc", func() { limit.NewBucket[string, string](tower.ServiceFunc[string, string](nil), 1, time.Second, 1) }, "limit.NewBucket: inner is nil"},
		{"NumZero", func() { limit.NewBucket(echo, 0, time.Second, 1) }, "limit.NewBucket: num must be at least 1, got 0"},
		{"NumMinInt", func() { limit.NewBucket(echo, math.MinInt64, time.Second, 1) }, "limit.NewBucket: num must be at least 1, got -9223372036854775808"},
		{"NumAbovePer", func() { limit.NewBucket(echo, 1001, time.Microsecond, 1) }, "limit.NewBucket: num must be at most per in nanoseconds (a token per nanosecond), got 1001 per 1µs"},
		{"PerZero", func() { limit.NewBucket(echo, 1, 0, 1) }, "limit.NewBucket: per must be positive, got 0s"},
		{"PerNegative", func() { limit.NewBucket(echo, 1, -time.Second, 1) }, "limit.NewBucket: per must be positive, got -1s"},
		{"BurstZero", func() { limit.NewBucket(echo, 1, time.Second, 0) }, "limit.NewBucket: burst must be at least 1, got 0"},
		{"BurstNegative", func() { limit.NewBucket(echo, 1, time.Second, -1) }, "limit.NewBucket: burst must be at least 1, got -1"},
		{"BurstTooLong", func() { limit.NewBucket(echo, 1, time.Hour, math.MaxInt32*4) }, "limit.NewBucket: burst 8589934588 of tokens every 1h0m0s is longer than a Duration holds"},
		{"NilOption", func() { limit.NewBucket(echo, 1, time.Second, 1, limit.WithMetrics(nil), nil) }, "limit.NewBucket: option 1 is nil"},
		{"LayerNumZero", func() { limit.NewBucketLayer[string, string](0, time.Second, 1) }, "limit.NewBucketLayer: num must be at least 1, got 0"},
		{"LayerPerZero", func() { limit.NewBucketLayer[string, string](1, 0, 1) }, "limit.NewBucketLayer: per must be positive, got 0s"},
		{"LayerBurstZero", func() { limit.NewBucketLayer[string, string](1, time.Second, 0) }, "limit.NewBucketLayer: burst must be at least 1, got 0"},
		{"LayerNilOption", func() { limit.NewBucketLayer[string, string](1, time.Second, 1, nil) }, "limit.NewBucketLayer: option 0 is nil"},
		{"LayerTypedNilInner", func() {
			limit.NewBucketLayer[string, string](1, time.Second, 1).Wrap((*towertest.Mock[string, string])(nil))
		}, "limit.NewBucket: inner is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// The largest values accepted: a token every nanosecond, and the largest
// burst a Duration holds.
func TestBucketLargestParameters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 1000, time.Microsecond, 5)
		if n := countNow(t, b); n != 5 {
			t.Errorf("a token per ns, burst 5: got %d at once, want 5", n)
		}
		time.Sleep(3 * time.Nanosecond)
		if n := countNow(t, b); n != 3 {
			t.Errorf("3ns later: got %d, want 3", n)
		}
		limit.NewBucket(echo, 1, 1, math.MaxInt64)
	})
}

func TestBucketConformance(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer func() tower.Layer[string, string]
	}{
		{"Burst1Per100ms", func() tower.Layer[string, string] {
			return limit.NewBucketLayer[string, string](1, 100*time.Millisecond, 1)
		}},
		{"3PerSecondBurst3", func() tower.Layer[string, string] { return limit.NewBucketLayer[string, string](3, time.Second, 3) }},
		{"NeverReached", func() tower.Layer[string, string] {
			return limit.NewBucketLayer[string, string](1<<29, time.Second, 1<<29)
		}},
		{"Metrics", func() tower.Layer[string, string] {
			return limit.NewBucketLayer[string, string](1, 100*time.Millisecond, 1, limit.WithMetrics(new(metrics.Counts)))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: tt.layer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}
