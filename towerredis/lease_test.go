package towerredis

// In-package: tests drive a Concurrency's unexported renewal, scripts, lease sets.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/redistest"
	"github.com/towergo/tower/towertest"
)

// These tests run against a real redis-server, on the real clock: every
// wait is bounded, and bounds on durations leave room for a busy machine.

// leaseTrips records the round trips an observer sees.
type leaseTrips struct {
	mu    sync.Mutex
	trips []RoundTrip
}

func (r *leaseTrips) observe(rt RoundTrip) {
	r.mu.Lock()
	r.trips = append(r.trips, rt)
	r.mu.Unlock()
}

// count returns how many round trips of op were seen whose error is (or
// wraps) want; a nil want counts those without an error.
func (r *leaseTrips) count(op string, want error) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rt := range r.trips {
		if rt.Op != op {
			continue
		}
		if (want == nil && rt.Err == nil) || (want != nil && errors.Is(rt.Err, want)) {
			n++
		}
	}
	return n
}

// failed returns how many round trips of op failed, whatever the error.
func (r *leaseTrips) failed(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rt := range r.trips {
		if rt.Op == op && rt.Err != nil {
			n++
		}
	}
	return n
}

// waitFor polls cond every millisecond until it holds, or fails t after
// limit.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// renewing reports whether c's renewal goroutine runs.
func (c *Concurrency[Req, Res]) renewingNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renewing
}

// Many replicas, each with a client of its own, share one limit of 3:
// the inner services never see more than 3 calls at once, together, and
// do see 3, and every lease is given back at the end (or, if giving one
// back timed out on a busy machine, expires within its TTL).
func TestLeaseMaxAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	trips := &leaseTrips{}
	const (
		replicas = 4
		callers  = 4 // per replica
		calls    = 15
		max      = 3
	)
	var now, peak, total, refusals atomic.Int64
	inner := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		n := now.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(2 * time.Millisecond)
		now.Add(-1)
		total.Add(1)
		return req, nil
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, replicas*callers)
	for range replicas {
		svc := NewConcurrency(inner, leaseClient(t, srv.Addr()), "fleet", max, time.Second,
			WithPollInterval(time.Millisecond), WithFailMode(FailClosed), WithObserver(trips.observe))
		for range callers {
			wg.Go(func() {
				for range calls {
					_, err := tower.Call(ctx, svc, "x")
					// A round trip slower than the timeout (a busy machine)
					// refuses: the caller sends the request again, as
					// IsOverloaded invites it to.
					for errors.Is(err, ErrUnreachable) {
						refusals.Add(1)
						_, err = tower.Call(ctx, svc, "x")
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Call: %v", err)
	}
	if got, want := total.Load(), int64(replicas*callers*calls); got != want {
		t.Errorf("got %d calls, want %d", got, want)
	}
	if n := refusals.Load(); n > 0 {
		t.Logf("%d requests refused for a round trip slower than the timeout, and sent again", n)
	}
	// Never more than max at once. Exactly max at the peak, unless a
	// release failed (a round trip slower than the timeout on a busy
	// machine): its lease is held until its TTL, a second, longer than
	// the whole run, which then had one place less.
	failed := trips.failed("lease.release")
	if got := peak.Load(); got > max || (got < max && failed == 0) {
		t.Errorf("got at most %d calls at once across the replicas, want %d", got, max)
	}
	rdb := leaseClient(t, srv.Addr())
	if failed == 0 {
		if n := leaseCard(t, rdb, "fleet"); n != 0 {
			t.Errorf("got %d leases held at the end, want 0", n)
		}
	} else {
		t.Logf("%d releases failed; their leases expire", failed)
		waitFor(t, 2*time.Second, "the leases whose release failed expire", func() bool { return leaseCard(t, rdb, "fleet") == 0 })
	}
}

// A call that lasts several TTLs keeps its lease: it is renewed, and no
// other replica gets the place until the call returns; then it gets it at
// once. The renewal goroutine ends when the last lease is given back.
func TestLeaseRenewedPastTTL(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 450 * time.Millisecond
	trips := &leaseTrips{}
	hold := make(chan struct{})
	entered := make(chan struct{})
	long := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		close(entered)
		<-hold
		return req, nil
	})
	a := NewConcurrency(long, leaseClient(t, srv.Addr()), "renew", 1, ttl, WithObserver(trips.observe))
	b := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "renew", 1, ttl, WithFailMode(FailClosed))
	if a.renewingNow() {
		t.Fatal("an idle limiter runs a renewal goroutine")
	}
	done := make(chan error, 1)
	go func() { _, err := tower.Call(t.Context(), a, "long"); done <- err }()
	<-entered
	if !a.renewingNow() {
		t.Fatal("a limiter that holds a lease runs no renewal goroutine")
	}
	start := time.Now()
	for time.Since(start) < 3*ttl {
		if p, ok := leaseReadyNow(t, b); ok {
			p.Release()
			t.Fatalf("another replica got the place %v into a call that holds it, with a TTL of %v", time.Since(start), ttl)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// About 9 renewals in 3 TTLs; on a busy machine one may time out,
	// which a TTL of 9 timeouts survives.
	if n := trips.count("lease.renew", nil); n < 5 {
		t.Errorf("got %d successful renewals in %v, want at least 5 (one every %v)", n, 3*ttl, ttl/3)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatalf("Call: %v", err)
	}
	p, ok := leaseReadyNow(t, b)
	if !ok {
		t.Fatal("the place was not free after the call that held it returned")
	}
	p.Release()
	waitFor(t, time.Second, "the renewal goroutine ends once no lease is held", func() bool { return !a.renewingNow() })
	if n := trips.count("lease.renew", ErrLeaseLost); n != 0 {
		t.Errorf("got %d renewals that found the lease lost, want 0", n)
	}
}

// A lease that Redis no longer has when it is renewed (its replica was
// paused longer than the TTL and another took the place) is reported as
// ErrLeaseLost, is no longer renewed, and its call goes on; giving it back
// then costs no round trip. One found gone when it is given back is
// reported too.
func TestLeaseLost(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	key := "{" + DefaultPrefix + ":lease:lost}"
	const ttl = 450 * time.Millisecond
	trips := &leaseTrips{}
	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "lost", 2, ttl, WithObserver(trips.observe))

	p, err := c.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(t.Context(), key).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "a renewal reports the lease lost", func() bool { return trips.count("lease.renew", ErrLeaseLost) == 1 })
	if res, err := p.Call(t.Context(), "goes on"); err != nil || res != "goes on" {
		t.Errorf("the call of a lost lease got %q, %v; want it answered", res, err)
	}
	if n := trips.count("lease.release", nil) + trips.failed("lease.release"); n != 0 {
		t.Errorf("giving back a lost lease made %d round trips, want 0", n)
	}
	waitFor(t, time.Second, "the renewal goroutine ends", func() bool { return !c.renewingNow() })

	// Gone before any renewal: the give back finds it so.
	long := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "lost", 2, 30*time.Second, WithObserver(trips.observe), leasePatient)
	p, err = long.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(t.Context(), key).Err(); err != nil {
		t.Fatal(err)
	}
	p.Release()
	if n := trips.count("lease.release", ErrLeaseLost); n != 1 {
		t.Errorf("got %d releases reporting ErrLeaseLost, want 1", n)
	}
}

// Permits released unused, and permits called, give their leases back:
// the sorted set is empty again; and the renewal goroutine ends at once
// when the last lease is given back, long before its next renewal (the
// TTL is 30s).
func TestLeaseReleaseUnused(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "unused", 3, 30*time.Second, WithFailMode(FailClosed), leasePatient)
	var ps []tower.Permit[string, string]
	for range 3 {
		p, ok := leaseReadyNow(t, c)
		if !ok {
			t.Fatal("a free lease was not granted to a done ctx")
		}
		ps = append(ps, p)
	}
	if n := leaseCard(t, rdb, "unused"); n != 3 {
		t.Fatalf("got %d leases in Redis, want 3", n)
	}
	if _, ok := leaseReadyNow(t, c); ok {
		t.Fatal("a fourth lease was granted with a limit of 3")
	}
	ps[0].Release()
	ps[1].Release()
	if n := leaseCard(t, rdb, "unused"); n != 1 {
		t.Errorf("got %d leases after releasing 2 of 3, want 1", n)
	}
	if _, err := ps[2].Call(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if n := leaseCard(t, rdb, "unused"); n != 0 {
		t.Errorf("got %d leases after all were used, want 0", n)
	}
	waitFor(t, time.Second, "the renewal goroutine ends", func() bool { return !c.renewingNow() })
}

// A failure of the inner service's Ready gives the lease back.
func TestLeaseInnerReadyFails(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	broken := errors.New("broken")
	inner := leaseFailing{broken}
	c := NewConcurrency[string, string](inner, leaseClient(t, srv.Addr()), "inner", 1, 10*time.Second, leasePatient)
	if _, err := c.Ready(t.Context()); !errors.Is(err, broken) {
		t.Fatalf("got %v, want the inner service's error", err)
	}
	if n := leaseCard(t, rdb, "inner"); n != 0 {
		t.Errorf("got %d leases after the inner service failed, want 0", n)
	}
}

type leaseFailing struct{ err error }

func (f leaseFailing) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.Permit[string, string]{}, f.err
}

// A waiter gets the lease once the holder gives it back, within about
// one poll interval; with a poll interval longer than the TTL, it asks
// again when the earliest lease expires (here a foreign lease written
// straight into Redis, which nobody renews).
func TestLeaseWaiter(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	sink := &metrics.Counts{}
	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "wait", 1, time.Second,
		WithPollInterval(20*time.Millisecond), WithMetrics(sink))
	held, err := c.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := sink.Get(metrics.InFlight); got != 1 {
		t.Errorf("InFlight = %d with a permit held, want 1", got)
	}
	got := make(chan time.Time, 1)
	go func() {
		p, err := c.Ready(t.Context())
		if err == nil {
			got <- time.Now()
			p.Release()
		}
	}()
	waitFor(t, time.Second, "the waiter shows in Waiting", func() bool { return sink.Get(metrics.Waiting) == 1 })
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	held.Release()
	select {
	case at := <-got:
		if d := at.Sub(released); d > 500*time.Millisecond {
			t.Errorf("the waiter got the lease %v after it was given back, want about one poll interval (20ms)", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the lease given back")
	}
	waitFor(t, time.Second, "InFlight and Waiting back to 0", func() bool {
		return sink.Get(metrics.Waiting) == 0 && sink.Get(metrics.InFlight) == 0
	})

	// A foreign lease that expires 300ms from now on Redis's clock; a
	// waiter that polls every 10s asks again when it expires, and not
	// before: in two round trips (three if Redis was slow to answer).
	trips := &leaseTrips{}
	slow := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "expire", 1, time.Second,
		WithPollInterval(10*time.Second), WithObserver(trips.observe), WithFailMode(FailClosed), WithTimeout(100*time.Millisecond))
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	expiry := now.Add(300 * time.Millisecond)
	if err := rdb.ZAdd(t.Context(), "{"+DefaultPrefix+":lease:expire}", redis.Z{Score: float64(expiry.UnixMilli()), Member: "foreign"}).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	p, err := slow.Ready(ctx)
	if err != nil || isRefusal(&p) {
		t.Fatalf("Ready: %v, a refusal %t; want the lease once the foreign one expired", err, err == nil)
	}
	p.Release()
	after, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if after.Before(expiry) {
		t.Errorf("got the place at %v on Redis's clock, before the lease that held it expired at %v", after, expiry)
	}
	if d := after.Sub(expiry); d > time.Second {
		t.Errorf("got the place %v after the lease that held it expired, want it soon after", d)
	}
	if n := trips.count("lease.acquire", nil) + trips.failed("lease.acquire"); n < 2 || n > 3 {
		t.Errorf("got %d acquire round trips, want 2: one that found the place taken until the lease's expiry, one at its expiry", n)
	}
}

// A done ctx gets a free lease, and when none is free, ctx's error at once
// after one round trip.
func TestLeaseProbe(t *testing.T) {
	srv := redistest.Start(t)
	trips := &leaseTrips{}
	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "probe", 1, 10*time.Second, WithObserver(trips.observe), WithFailMode(FailClosed), leasePatient)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	p, err := c.Ready(done)
	if err != nil {
		t.Fatalf("Ready with a done ctx and a free lease: %v", err)
	}
	defer p.Release()
	if _, err := c.Ready(done); err != context.Canceled {
		t.Fatalf("Ready with a done ctx and no free lease = %v, want %v", err, context.Canceled)
	}
	if n := trips.count("lease.acquire", nil) + trips.failed("lease.acquire"); n != 2 {
		t.Errorf("got %d acquire round trips for two probes, want 2", n)
	}
}

// A key of another type where the limit's sorted set should be is a bad
// reply: never a grant, whatever the fail mode; the probe and Ready return
// ErrBadReply after one round trip each, and the key is left as it was.
func TestLeaseBadReply(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	key := "{" + DefaultPrefix + ":lease:bad}"
	if err := rdb.Set(t.Context(), key, "not a sorted set", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []FailMode{FailOpen, FailClosed} {
		t.Run(mode.String(), func(t *testing.T) {
			trips := &leaseTrips{}
			c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "bad", 1, time.Second,
				WithFailMode(mode), WithObserver(trips.observe))
			if _, ok, err := tower.ReadyNow[string, string](c); ok || !errors.Is(err, ErrBadReply) {
				t.Fatalf("a probe: ready %t, %v; want refused with ErrBadReply", ok, err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			if _, err := c.Ready(ctx); !errors.Is(err, ErrBadReply) {
				t.Errorf("Ready = %v, want ErrBadReply", err)
			}
			if n := trips.count("lease.acquire", ErrBadReply); n != 2 {
				t.Errorf("got %d acquire round trips with ErrBadReply, want 2, one per Ready", n)
			}
			if n := trips.count("lease.acquire", nil); n != 0 {
				t.Errorf("got %d acquire round trips without an error, want 0", n)
			}
		})
	}
	if v, err := rdb.Get(t.Context(), key).Result(); err != nil || v != "not a sorted set" {
		t.Errorf("the key holds %q, %v after the limit met it; want it left alone", v, err)
	}
}

// Bad input panics, with a message naming what is wrong.
func TestLeaseBadInput(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	noTimeout := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer noTimeout.Close()
	var nilClient *redis.Client
	for _, tt := range []struct {
		name string
		new  func()
		want string
	}{
		{"nil inner", func() { NewConcurrency[string, string](nil, rdb, "n", 1, time.Second) }, "inner is nil"},
		{"nil client", func() { NewConcurrency(leaseEcho, nil, "n", 1, time.Second) }, "client is nil"},
		{"typed nil client", func() { NewConcurrency(leaseEcho, nilClient, "n", 1, time.Second) }, "client is nil"},
		{"no context timeout", func() { NewConcurrency(leaseEcho, noTimeout, "n", 1, time.Second) }, "ContextTimeoutEnabled"},
		{"empty name", func() { NewConcurrency(leaseEcho, rdb, "", 1, time.Second) }, "name is empty"},
		{"max 0", func() { NewConcurrency(leaseEcho, rdb, "n", 0, time.Second) }, "max must be at least 1, got 0"},
		{"max -1", func() { NewConcurrency(leaseEcho, rdb, "n", -1, time.Second) }, "max must be at least 1, got -1"},
		{"ttl 0", func() { NewConcurrency(leaseEcho, rdb, "n", 1, 0) }, "ttl must be positive, got 0s"},
		{"ttl negative", func() { NewConcurrency(leaseEcho, rdb, "n", 1, -time.Second) }, "ttl must be positive"},
		{"ttl under 9 timeouts", func() { NewConcurrency(leaseEcho, rdb, "n", 1, 450*time.Millisecond-1) }, "ttl must be at least 9 times the round-trip timeout of 50ms, and at least 3ms, so that renewals keep up: at least 450ms"},
		{"ttl under 9 custom timeouts", func() { NewConcurrency(leaseEcho, rdb, "n", 1, time.Second, WithTimeout(200*time.Millisecond)) }, "at least 1.8s, got 1s"},
		{"ttl under MinTTL", func() { NewConcurrency(leaseEcho, rdb, "n", 1, 2*time.Millisecond, WithTimeout(time.Microsecond)) }, "at least 3ms, got 2ms"},
		{"nil option", func() { NewConcurrency(leaseEcho, rdb, "n", 1, time.Second, nil) }, "option 0 is nil"},
		{"typed nil option", func() { NewConcurrency(leaseEcho, rdb, "n", 1, time.Second, WithTimeout(time.Second), Option(nil)) }, "towerredis.NewConcurrency: option 1 is nil"},
		{"layer max 0", func() { NewConcurrencyLayer[string, string](rdb, "n", 0, time.Second) }, "towerredis.NewConcurrencyLayer: max must be at least 1"},
		{"layer ttl", func() { NewConcurrencyLayer[string, string](rdb, "n", 1, time.Millisecond) }, "towerredis.NewConcurrencyLayer: ttl must be at least"},
		{"poll 0", func() { WithPollInterval(0) }, "towerredis.WithPollInterval: interval must be positive, got 0s"},
		{"poll negative", func() { WithPollInterval(-time.Millisecond) }, "interval must be positive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if msg := fmt.Sprint(r); !strings.Contains(msg, tt.want) {
					t.Errorf("panicked with %q, want it to contain %q", msg, tt.want)
				}
			}()
			tt.new()
		})
	}
	// The shortest TTLs allowed are allowed.
	NewConcurrency(leaseEcho, rdb, "n", 1, 450*time.Millisecond)
	NewConcurrency(leaseEcho, rdb, "n", 1, MinTTL, WithTimeout(time.Microsecond))
}

// The poll wait is between half and one and a half poll intervals, and
// covers that range.
func TestLeasePollWait(t *testing.T) {
	c := &Concurrency[string, string]{o: options{poll: 100 * time.Millisecond}}
	lo, hi := time.Hour, time.Duration(0)
	for range 10000 {
		d := c.pollWait()
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 50*time.Millisecond || hi >= 150*time.Millisecond {
		t.Errorf("poll waits range over [%v, %v], want within [50ms, 150ms)", lo, hi)
	}
	if lo > 52*time.Millisecond || hi < 148*time.Millisecond {
		t.Errorf("poll waits range over [%v, %v], want them to cover [50ms, 150ms) nearly", lo, hi)
	}
}

// The replies of the scripts are read strictly: anything else is a bad
// reply.
func TestLeaseReplies(t *testing.T) {
	for _, tt := range []struct {
		reply any
		ok    bool
	}{
		{[]any{int64(1), int64(0)}, true},
		{[]any{int64(0), int64(1)}, true},
		{[]any{int64(0), int64(250)}, true},
		{[]any{int64(1), int64(1)}, false},
		{[]any{int64(0), int64(0)}, false},
		{[]any{int64(0), int64(-1)}, false},
		{[]any{int64(2), int64(0)}, false},
		{[]any{int64(-1), int64(5)}, false},
		{[]any{int64(1)}, false},
		{"the key holds a string", false},
		{int64(1), false},
		{nil, false},
	} {
		if _, ok := acquired(tt.reply); ok != tt.ok {
			t.Errorf("acquired(%#v) ok = %v, want %v", tt.reply, ok, tt.ok)
		}
	}
	for _, tt := range []struct {
		reply any
		n     int
		ok    bool
	}{
		{[]any{}, 0, true},
		{[]any{}, 2, true},
		{[]any{int64(1), int64(2)}, 2, true},
		{[]any{int64(2)}, 2, true},
		{[]any{int64(3)}, 2, false},
		{[]any{int64(0)}, 2, false},
		{[]any{int64(1), int64(2), int64(2)}, 2, false},
		{[]any{"1"}, 2, false},
		{"the key holds a list", 2, false},
	} {
		if _, ok := lostPositions(tt.reply, tt.n); ok != tt.ok {
			t.Errorf("lostPositions(%#v, %d) ok = %v, want %v", tt.reply, tt.n, ok, tt.ok)
		}
	}
	for _, tt := range []struct {
		reply any
		ok    bool
	}{{int64(1), true}, {int64(0), false}, {int64(2), false}, {"1", false}} {
		if _, ok := removed(tt.reply); ok != tt.ok {
			t.Errorf("removed(%#v) ok = %v, want %v", tt.reply, ok, tt.ok)
		}
	}
}

// With Redis unreachable (a closed port, or a black hole that accepts and
// never answers), each fail mode answers within its timeout, after one
// round trip, probe or not: FailOpen admits without a lease, and the
// observer sees the error; FailClosed returns a permit whose Call fails
// with an *UnreachableError without reaching the inner service, and which
// counts as neither in flight nor waiting.
func TestLeaseUnreachable(t *testing.T) {
	const timeout = 100 * time.Millisecond
	const slack = 400 * time.Millisecond // for a busy machine
	for _, tt := range []struct {
		name string
		addr func(testing.TB) string
	}{{"ClosedPort", closedPort}, {"BlackHole", blackHole}} {
		t.Run(tt.name, func(t *testing.T) {
			addr := tt.addr(t)
			t.Run("FailOpen", func(t *testing.T) {
				trips := &leaseTrips{}
				sink := &metrics.Counts{}
				c := NewConcurrency(leaseEcho, leaseClient(t, addr), "down", 1, time.Second,
					WithTimeout(timeout), WithObserver(trips.observe), WithMetrics(sink))
				for _, probe := range []bool{false, true} {
					start := time.Now()
					ctx := t.Context()
					if probe {
						done, cancel := context.WithCancel(ctx)
						cancel()
						ctx = done
					}
					p, err := c.Ready(ctx)
					if err != nil {
						t.Fatalf("Ready (probe %v) = %v, want a permit without a lease", probe, err)
					}
					if d := time.Since(start); d > timeout+slack {
						t.Errorf("Ready took %v, want at most the timeout %v", d, timeout)
					}
					if got := sink.Get(metrics.InFlight); got != 1 {
						t.Errorf("InFlight = %d with a permit admitted without a lease, want 1", got)
					}
					if _, err := p.Call(t.Context(), "x"); err != nil {
						t.Fatal(err)
					}
				}
				if n := trips.failed("lease.acquire"); n != 2 {
					t.Errorf("the observer saw %d failed acquires, want 2", n)
				}
				if n := len(trips.trips); n != 2 {
					t.Errorf("got %d round trips, want 2: a permit admitted without a lease gives nothing back", n)
				}
				if c.renewingNow() {
					t.Error("a renewal goroutine runs with no lease held")
				}
			})
			t.Run("FailClosed", func(t *testing.T) {
				trips := &leaseTrips{}
				sink := &metrics.Counts{}
				inner := &counting{}
				c := NewConcurrency[string, string](inner, leaseClient(t, addr), "down", 1, time.Second,
					WithTimeout(timeout), WithFailMode(FailClosed), WithObserver(trips.observe), WithMetrics(sink))
				for _, probe := range []bool{false, true} {
					start := time.Now()
					ctx := t.Context()
					if probe {
						done, cancel := context.WithCancel(ctx)
						cancel()
						ctx = done
					}
					p, err := c.Ready(ctx)
					if err != nil {
						t.Fatalf("Ready (probe %v) = %v, want a permit that refuses", probe, err)
					}
					if d := time.Since(start); d > timeout+slack {
						t.Errorf("Ready took %v, want at most the timeout %v", d, timeout)
					}
					if in, w := sink.Get(metrics.InFlight), sink.Get(metrics.Waiting); in != 0 || w != 0 {
						t.Errorf("InFlight %d, Waiting %d with a permit that refuses, want 0, 0", in, w)
					}
					refused(t, p, "down")
				}
				p, err := c.Ready(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				p.Release()
				if n := trips.failed("lease.acquire"); n != 3 || len(trips.trips) != 3 {
					t.Errorf("the observer saw %d round trips, %d failed acquires; want 3, 3: a refusal gives nothing back", len(trips.trips), n)
				}
				if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 0 || o != 0 {
					t.Errorf("the inner service got %d calls, %d permits outstanding; want 0, 0", n, o)
				}
			})
		})
	}
}

// The limit keeps the readiness contract: the towertest conformance suite,
// against the real server. The suite runs each test in a testing/synctest
// bubble; the round trips to Redis are real network I/O, which the bubble
// waits for, and the lease of a minute is never near its end. Each
// configuration leaves no lease behind.
func TestLeaseConformance(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	if err := rdb.Ping(t.Context()).Err(); err != nil { // dial before the bubbles
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		max  int
		opts []ConcurrencyOption
	}{
		{"Max1", 1, []ConcurrencyOption{leasePatient}},
		{"Max2FailClosed", 2, []ConcurrencyOption{WithFailMode(FailClosed), leasePatient}},
		{"Max1Metrics", 1, []ConcurrencyOption{WithMetrics(&metrics.Counts{}), WithPollInterval(time.Millisecond), leasePatient}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: func() tower.Layer[string, string] {
				return NewConcurrencyLayer[string, string](rdb, tt.name, tt.max, time.Minute, tt.opts...)
			}, Request: "hello", Response: "world"}.Run(t)
			if n := leaseCard(t, rdb, tt.name); n != 0 {
				t.Errorf("got %d leases held after the suite, want 0", n)
			}
		})
	}
}

// Redis restarted mid-run, empty: during the outage FailOpen admits at
// once without a lease and FailClosed refuses at once; once Redis is back,
// FailClosed grants a lease again, a lease held across the restart is
// reported lost (its call goes on), and the limit holds again.
func TestLeaseRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 2 * time.Second
	trips := &leaseTrips{}
	open := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "restart", 1, ttl,
		WithObserver(trips.observe), WithTimeout(200*time.Millisecond))
	closed := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "restart", 1, ttl,
		WithFailMode(FailClosed), WithTimeout(200*time.Millisecond))
	held, err := open.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := leaseReadyNow(t, closed); ok {
		p.Release()
		t.Fatal("a second lease was granted with a limit of 1")
	}

	srv.Kill()
	p, ok := leaseReadyNow(t, open)
	if !ok {
		t.Fatal("FailOpen did not admit with Redis down")
	}
	p.Release()
	if n := trips.failed("lease.acquire"); n != 1 {
		t.Errorf("the observer saw %d failed acquires, want 1", n)
	}
	p, err = closed.Ready(t.Context())
	if err != nil {
		t.Fatalf("FailClosed's Ready = %v with Redis down, want a permit that refuses", err)
	}
	refused(t, p, "restart")

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var got tower.Permit[string, string]
	waitFor(t, 5*time.Second, "FailClosed grants a lease once Redis is back", func() bool {
		p, err := closed.Ready(t.Context())
		if err != nil {
			t.Fatalf("FailClosed's Ready = %v, want a permit", err)
		}
		r, token := p.Split()
		if _, no := r.(*refusal[string, string]); no {
			r.ReleaseReserved(token) // Redis not answering yet
			return false
		}
		got = tower.NewPermit(r, token)
		return true
	})
	waitFor(t, 3*time.Second, "the lease held across the restart is reported lost", func() bool {
		return trips.count("lease.renew", ErrLeaseLost) == 1
	})
	if _, err := held.Call(t.Context(), "x"); err != nil {
		t.Errorf("the call of a lost lease failed: %v", err)
	}
	if p, ok := leaseReadyNow(t, open); ok {
		p.Release()
		t.Fatal("a second lease was granted with a limit of 1 after the restart")
	}
	got.Release()
	p, ok = leaseReadyNow(t, open)
	if !ok {
		t.Fatal("the lease given back after the restart was not granted again")
	}
	p.Release()
}

// BenchmarkLease is one request through the limit against the real
// server: a lease taken and given back, two round trips, serially and from
// parallel callers, under a limit they never reach. Scripts is the floor:
// the same two scripts run with go-redis directly, with no limit around
// them.
func BenchmarkLease(b *testing.B) {
	srv := redistest.Start(b)
	rdb := leaseClient(b, srv.Addr())
	c := NewConcurrency(leaseEcho, rdb, "bench", 1<<20, time.Minute)
	b.Run("Scripts", func(b *testing.B) {
		b.ReportAllocs()
		keys := []string{"{bench:scripts}"}
		for b.Loop() {
			if err := acquireScript.Run(b.Context(), rdb, keys, "m", 1<<20, 60000).Err(); err != nil {
				b.Fatal(err)
			}
			if err := releaseScript.Run(b.Context(), rdb, keys, "m").Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tower.Call(b.Context(), c, "x"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := tower.Call(b.Context(), c, "x"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// A panic in the observer goes up to Ready's caller, and the lease Redis
// granted in that round trip is given back; one in a renewal, on the
// limiter's own goroutine, is logged and the renewals go on.
func TestLeasePanics(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	var panicOn atomic.Value
	panicOn.Store("lease.acquire")
	observe := func(rt RoundTrip) {
		if rt.Op == panicOn.Load() {
			panic("observer: " + rt.Op)
		}
	}
	const ttl = 450 * time.Millisecond
	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "panics", 1, ttl, WithObserver(observe))
	func() {
		defer func() {
			if r := recover(); r != "observer: lease.acquire" {
				t.Errorf("Ready panicked with %v, want the observer's panic", r)
			}
		}()
		c.Ready(t.Context())
	}()
	if n := leaseCard(t, rdb, "panics"); n != 0 {
		t.Errorf("got %d leases after the observer panicked on a grant, want 0", n)
	}
	if c.renewingNow() {
		t.Error("a renewal goroutine runs after the observer panicked on a grant")
	}

	var logged strings.Builder
	var logMu sync.Mutex
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(leaseLockedWriter{&logMu, &logged}, nil)))
	panicOn.Store("lease.renew")
	p, err := c.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	key := "{" + DefaultPrefix + ":lease:panics}"
	first := rdb.ZRangeWithScores(t.Context(), key, 0, 0).Val()
	time.Sleep(ttl + ttl/2)
	later := rdb.ZRangeWithScores(t.Context(), key, 0, 0).Val()
	if len(first) != 1 || len(later) != 1 || later[0].Score < first[0].Score+float64(ttl.Milliseconds()/2) {
		t.Errorf("the lease went from %v to %v in %v: want it renewed despite the observer's panics", first, later, ttl+ttl/2)
	}
	p.Release()
	if n := leaseCard(t, rdb, "panics"); n != 0 {
		t.Errorf("got %d leases after the release, want 0", n)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logged.String(), "observer: lease.renew") {
		t.Errorf("the renewal's panic was not logged; the log holds %q", logged.String())
	}
}

// leaseLockedWriter writes to w under mu.
type leaseLockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l leaseLockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// An observer that ends the renewal goroutine with runtime.Goexit does not
// stop renewals for good: the next lease held starts the goroutine again.
func TestLeaseObserverGoexit(t *testing.T) {
	srv := redistest.Start(t)
	var once atomic.Bool
	observe := func(rt RoundTrip) {
		if rt.Op == "lease.renew" && once.CompareAndSwap(false, true) {
			runtime.Goexit()
		}
	}
	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "goexit", 2, 450*time.Millisecond, WithObserver(observe))
	p, err := c.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	waitFor(t, 2*time.Second, "the renewal goroutine ends with the observer's Goexit", func() bool { return !c.renewingNow() })
	q, err := c.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	if !c.renewingNow() {
		t.Error("a lease held after the renewal goroutine's Goexit started no renewal goroutine")
	}
}
