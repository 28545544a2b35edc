package towerredis

// In-package: some tests read a Bucket's unexported interval and batch (b, stock).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/redistest"
)

// slack is how much later than its exact instant a test on the real clock
// lets a wait end, on a busy machine.
const slack = 250 * time.Millisecond

// newTestBucket returns a Bucket on addr around a counting service, with its
// round trips counted.
func newTestBucket(t *testing.T, addr, name string, num int, per time.Duration, burst int, opts ...BucketOption) (*Bucket[string, string], *counting, *trips) {
	t.Helper()
	inner, rt := &counting{}, &trips{}
	// A second per round trip unless the test says otherwise: a busy
	// machine must not make a test's limit fail open by surprise.
	opts = append([]BucketOption{WithObserver(rt.Observe), WithTimeout(time.Second)}, opts...)
	return NewBucket[string, string](inner, newClient(t, addr), name, num, per, burst, opts...), inner, rt
}

// The interval is per/num rounded up to the microsecond, so the rate is
// never above num per period; the limits of the arithmetic and of a batch
// are where they are said to be.
func TestBucketInterval(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr())
	for _, tt := range []struct {
		num  int
		per  time.Duration
		want time.Duration
	}{
		{3, time.Second, 333_334 * time.Microsecond},
		{1000, time.Second, time.Millisecond},
		{1, time.Microsecond, time.Microsecond},
		{2, 3 * time.Microsecond, 2 * time.Microsecond},
		{1, 1500 * time.Nanosecond, 2 * time.Microsecond},
		{1_000_000, time.Second, time.Microsecond},
	} {
		if got := NewBucket[string, string](okService, c, "i", tt.num, tt.per, 1).b.interval; got != tt.want {
			t.Errorf("%d per %v: interval %v, want %v", tt.num, tt.per, got, tt.want)
		}
	}
	// The largest span the script's doubles hold exactly, 2^52µs, is
	// allowed (TestBucketPanics: one more token is not); a batch of 1 is no
	// batch.
	NewBucket[string, string](okService, c, "i", 1, 1<<40*time.Microsecond, 1<<12)
	if r := NewBucket[string, string](okService, c, "i", 1, time.Second, 2, WithBatch(1)); r.stock != nil {
		t.Error("WithBatch(1) made a batch, want none")
	}
	if r := NewBucket[string, string](okService, c, "i", 1, time.Second, 2, WithBatch(2)); r.stock == nil || r.stock.size != 2 || r.stock.keep != 2*time.Second {
		t.Errorf("WithBatch(2) with a burst of 2 tokens a second: batch %+v, want 2 tokens kept 2s", r.stock)
	}
}

// A done ctx (the probe) gets a token there now, in one round trip, and
// ctx.Err() once the bucket is empty, also in one round trip.
func TestBucketProbe(t *testing.T) {
	srv := redistest.Start(t)
	r, inner, rt := newTestBucket(t, srv.Addr(), "probe", 1, 10*time.Second, 2)
	for i := range 2 {
		p, ok, err := tower.ReadyNow[string, string](r)
		if !ok || err != nil {
			t.Fatalf("probe %d: ReadyNow = %v, %v; want a token of the burst", i, ok, err)
		}
		p.Call(t.Context(), "x")
	}
	start := time.Now()
	if _, ok, err := tower.ReadyNow[string, string](r); ok || err != nil {
		t.Fatalf("third probe: ReadyNow = %v, %v; want not ready: the burst is spent", ok, err)
	}
	within(t, "the refused probe", time.Since(start), 0, slack)
	if n := rt.N.Load(); n != 3 {
		t.Errorf("%d round trips for 3 probes, want 3", n)
	}
	if n := inner.Calls.Load(); n != 2 {
		t.Errorf("inner service got %d calls, want 2", n)
	}
}

// A caller that waits reserves the next token in the same round trip and
// sleeps until it: one round trip, at the token's instant. A caller whose
// deadline comes before the next token does not reserve it, and gets
// ctx.Err() at its deadline; the token goes to the next caller.
func TestBucketReadyWaitsForToken(t *testing.T) {
	srv := redistest.Start(t)
	r, _, rt := newTestBucket(t, srv.Addr(), "wait", 4, time.Second, 1)
	start := time.Now()
	mustReady(t, t.Context(), r)

	before := rt.N.Load()
	mustReady(t, t.Context(), r)
	within(t, "the second Ready", time.Since(start), 250*time.Millisecond, 250*time.Millisecond+slack)
	if n := rt.N.Load() - before; n != 1 {
		t.Errorf("the waiting Ready made %d round trips, want 1: it reserves the token", n)
	}

	short := time.Now() // before the deadline is set, which counts from a moment later
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	if _, err := r.Ready(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Ready with a deadline before the next token: %v, want %v", err, context.DeadlineExceeded)
	}
	within(t, "Ready with a short deadline", time.Since(short), 30*time.Millisecond, 30*time.Millisecond+slack)

	mustReady(t, t.Context(), r) // the third token: not taken by the caller that gave up
	within(t, "the third token", time.Since(start), 500*time.Millisecond, 500*time.Millisecond+slack)
}

// A caller whose ctx ends while it sleeps until its reserved token gets
// ctx.Err(), and the token is lost: the next caller's token comes one
// interval later.
func TestBucketReservedTokenLostOnCancel(t *testing.T) {
	srv := redistest.Start(t)
	r, _, _ := newTestBucket(t, srv.Addr(), "lost", 10, time.Second, 1)
	start := time.Now()
	mustReady(t, t.Context(), r)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := r.Ready(ctx); err != context.Canceled {
		t.Fatalf("Ready cancelled while it sleeps: %v, want %v", err, context.Canceled)
	}
	mustReady(t, t.Context(), r)
	within(t, "the token after the lost one", time.Since(start), 200*time.Millisecond, 200*time.Millisecond+slack)
}

// A permit released unused gives its token back to the bucket in one
// round trip; so does Ready when the inner service fails. A called permit
// gives nothing back.
func TestBucketGivesBack(t *testing.T) {
	srv := redistest.Start(t)
	r, inner, rt := newTestBucket(t, srv.Addr(), "back", 1, 10*time.Second, 1)
	p := mustReady(t, t.Context(), r)
	p.Release()
	if n := rt.N.Load(); n != 2 {
		t.Errorf("%d round trips for a Ready and a Release, want 2", n)
	}
	p, ok, err := tower.ReadyNow[string, string](r)
	if !ok || err != nil {
		t.Fatalf("ReadyNow after a Release = %v, %v; want the token given back", ok, err)
	}
	p.Call(t.Context(), "x")
	if _, ok, _ := tower.ReadyNow[string, string](r); ok {
		t.Fatal("ReadyNow after a Call granted a token: a called permit gave its token back")
	}
	if n := inner.Outstanding.Load(); n != 0 {
		t.Errorf("inner service has %d permits outstanding, want 0", n)
	}

	broken := errors.New("broken")
	failing := NewBucket[string, string](failingService{broken}, newClient(t, srv.Addr()), "back2", 1, 10*time.Second, 1)
	if _, err := failing.Ready(t.Context()); !errors.Is(err, broken) {
		t.Fatalf("Ready with a failing inner service: %v, want %v", err, broken)
	}
	same := NewBucket[string, string](okService, newClient(t, srv.Addr()), "back2", 1, 10*time.Second, 1)
	if _, ok, err := tower.ReadyNow[string, string](same); !ok || err != nil {
		t.Errorf("ReadyNow after the inner service failed = %v, %v; want the token given back", ok, err)
	}
}

type failingService struct{ err error }

func (f failingService) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.Permit[string, string]{}, f.err
}

// WithMetrics reports Waiting while a caller sleeps until its token, and
// nothing for a caller that finds one.
func TestBucketMetricsWaiting(t *testing.T) {
	srv := redistest.Start(t)
	var counts metrics.Counts
	r, _, _ := newTestBucket(t, srv.Addr(), "metrics", 2, time.Second, 1, WithMetrics(&counts))
	mustReady(t, t.Context(), r)
	if n := counts.Get(metrics.Waiting); n != 0 {
		t.Fatalf("Waiting = %d after a token there now, want 0", n)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Ready(t.Context())
	}()
	time.Sleep(100 * time.Millisecond) // of the 500ms the caller waits
	if n := counts.Get(metrics.Waiting); n != 1 {
		t.Errorf("Waiting = %d while a caller sleeps until its token, want 1", n)
	}
	<-done
	if n := counts.Get(metrics.Waiting); n != 0 {
		t.Errorf("Waiting = %d after the wait, want 0", n)
	}
}

// A key of another type, or a key holding anything but a tat, is a bad
// reply: Ready returns an error wrapping ErrBadReply, even failing open,
// and grants nothing; the observer sees it.
func TestBucketBadReply(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr())
	for _, tt := range []struct {
		name string
		set  func(key string) error
	}{
		{"list", func(key string) error { return c.RPush(t.Context(), key, "x").Err() }},
		{"text", func(key string) error { return c.Set(t.Context(), key, "abc", 0).Err() }},
		{"fraction", func(key string) error { return c.Set(t.Context(), key, "1.5", 0).Err() }},
		{"huge", func(key string) error { return c.Set(t.Context(), key, "1e300", 0).Err() }},
		{"negative", func(key string) error { return c.Set(t.Context(), key, "-5", 0).Err() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, inner, rt := newTestBucket(t, srv.Addr(), "bad"+tt.name, 1, time.Second, 5, WithFailMode(FailOpen))
			if err := tt.set(r.Key()); err != nil {
				t.Fatal(err)
			}
			for _, ctx := range []context.Context{t.Context(), doneCtx()} {
				p, err := r.Ready(ctx)
				if !errors.Is(err, ErrBadReply) || p.Held() {
					t.Errorf("Ready = %v, %v; want no permit and an error wrapping ErrBadReply", p.Held(), err)
				}
			}
			if !errors.Is(rt.LastErr(), ErrBadReply) {
				t.Errorf("the observer saw %v, want ErrBadReply", rt.LastErr())
			}
			if n := inner.Outstanding.Load(); n != 0 {
				t.Errorf("inner service has %d permits outstanding, want 0", n)
			}
		})
	}
}
