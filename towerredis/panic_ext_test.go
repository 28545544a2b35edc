package towerredis_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
	"github.com/towergo/tower/towertest"
)

// armed is a metrics.Sink, and an observer for WithObserver, that panics
// once, at the next Add or round trip its test armed it for, with
// "armed: " and what it was armed for. A round trip is armed for by its
// op, and fires only if it has no error; an Add by its kind and its
// delta, "Waiting+1". It counts the Adds that do not panic.
type armed struct {
	metrics.Counts
	waits chan struct{} // gets a value at each Waiting+1 that does not panic, if there is room

	mu sync.Mutex
	on string // what panics next; "" for nothing
}

func newArmed() *armed { return &armed{waits: make(chan struct{}, 1)} }

func (a *armed) arm(what string) {
	a.mu.Lock()
	a.on = what
	a.mu.Unlock()
}

// fire panics if a was armed for what, once.
func (a *armed) fire(what string) {
	a.mu.Lock()
	hit := a.on == what
	if hit {
		a.on = ""
	}
	a.mu.Unlock()
	if hit {
		panic("armed: " + what)
	}
}

func (a *armed) Add(k metrics.Kind, delta int64) {
	a.fire(fmt.Sprintf("%v%+d", k, delta))
	a.Counts.Add(k, delta)
	if k == metrics.Waiting && delta > 0 {
		select {
		case a.waits <- struct{}{}:
		default:
		}
	}
}

func (a *armed) observe(rt towerredis.RoundTrip) {
	if rt.Err == nil {
		a.fire(rt.Op)
	}
}

// A panic in a Bucket's sink or observer goes up to Ready's caller, and
// the token Ready got or reserved goes back first: the next caller gets
// its token when it would have if the Ready that panicked had never been
// called, not a token (1s) later. A bucket of a token a second, burst 1,
// or 2 with batches of 2, on Redis's clock; the cases run at once.
func TestBucketPanicGivesTokenBack(t *testing.T) {
	t.Parallel() // it waits on the real clock: beside the other such tests
	srv := redistest.Start(t)
	g := &together{t: t}
	defer g.wait()
	const s = time.Second
	for i, tt := range []struct {
		name   string
		batch  int
		before []time.Duration // the Readys before the one that panics, each at the instant it gets its token
		panics string          // what panics in the next Ready
		at     time.Duration   // when that Ready panics
		next   time.Duration   // when the Ready after it gets its token
	}{
		{"ObserverOnGrant", 1, nil, "rate", 0, 0},
		{"SinkAsWaitBegins", 1, []time.Duration{0}, "Waiting+1", 0, s},
		{"SinkAsWaitEnds", 1, []time.Duration{0}, "Waiting-1", s, s},
		{"BatchObserverOnGrant", 2, nil, "rate", 0, 0},
		{"BatchFetchSinkAsWaitBegins", 2, []time.Duration{0, 0}, "Waiting+1", 0, s},
		{"BatchFetchSinkAsWaitEnds", 2, []time.Duration{0, 0}, "Waiting-1", s, s},
		{"BatchTokenSinkAsWaitBegins", 2, []time.Duration{0, 0, s}, "Waiting+1", s, 2 * s},
		{"BatchTokenSinkAsWaitEnds", 2, []time.Duration{0, 0, s}, "Waiting-1", 2 * s, 2 * s},
	} {
		g.run(tt.name, func(t *testing.T) {
			a := newArmed()
			r := towerredis.NewBucket[string, string](okService, newClient(t, srv.Addr()), "panic"+strconv.Itoa(i), 1, s, tt.batch,
				towerredis.WithBatch(tt.batch), towerredis.WithMetrics(a), towerredis.WithObserver(a.observe), towerredis.WithTimeout(s))
			start := time.Now()
			ready := func(n int, want time.Duration) {
				t.Helper()
				p, err := r.Ready(t.Context())
				if err != nil {
					t.Fatalf("Ready %d: %v, want a token", n, err)
				}
				within(t, fmt.Sprint("Ready ", n), time.Since(start), want, want+late)
				p.Call(t.Context(), "x")
			}
			for n, want := range tt.before {
				ready(n, want)
			}
			a.arm(tt.panics)
			towertest.Panics(t, "armed: "+tt.panics, func() { r.Ready(t.Context()) })
			within(t, "the Ready that panicked", time.Since(start), tt.at, tt.at+late)
			ready(len(tt.before)+1, tt.next)
		})
	}
}

// A panic in a Keyed's sink or observer goes up to the caller, and the
// token of the key its Call got or reserved goes back first; the inner
// permit is released. A key of a token a second, burst 1, and a max wait
// of a minute, on Redis's clock; the cases run at once.
func TestKeyedPanicGivesTokenBack(t *testing.T) {
	t.Parallel() // it waits on the real clock: beside the other such tests
	srv := redistest.Start(t)
	g := &together{t: t}
	defer g.wait()
	const s = time.Second
	for i, tt := range []struct {
		name   string
		before []time.Duration // the Calls before the one that panics, each at the instant it is served
		panics string
		at     time.Duration // when the Call panics
		next   time.Duration // when the Call after it is served
	}{
		{"ObserverOnGrant", nil, "rate", 0, 0},
		{"SinkAsWaitBegins", []time.Duration{0}, "Waiting+1", 0, s},
		{"SinkAsWaitEnds", []time.Duration{0}, "Waiting-1", s, s},
	} {
		g.run(tt.name, func(t *testing.T) {
			a := newArmed()
			inner := &counting{}
			r := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), "panic"+strconv.Itoa(i), func(s string) string { return s },
				1, s, 1, towerredis.WithMaxWait(time.Minute), towerredis.WithMetrics(a), towerredis.WithObserver(a.observe), towerredis.WithTimeout(s))
			start := time.Now()
			call := func(n int, want time.Duration) {
				t.Helper()
				if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
					t.Fatalf("Call %d: %v, want served", n, err)
				}
				within(t, fmt.Sprint("Call ", n), time.Since(start), want, want+late)
			}
			for n, want := range tt.before {
				call(n, want)
			}
			a.arm(tt.panics)
			towertest.Panics(t, "armed: "+tt.panics, func() { tower.Call[string, string](t.Context(), r, "k") })
			within(t, "the Call that panicked", time.Since(start), tt.at, tt.at+late)
			call(len(tt.before)+1, tt.next)
			if o := inner.Outstanding.Load(); o != 0 {
				t.Errorf("%d inner permits outstanding, want 0", o)
			}
		})
	}
}

// A Keyed whose sink panics as it counts a request Throttled releases
// the inner permit before the panic goes on.
func TestKeyedThrottledPanicReleasesInner(t *testing.T) {
	srv := redistest.Start(t)
	a := newArmed()
	inner := &counting{}
	r := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), "keyed", func(s string) string { return s },
		1, time.Minute, 1, towerredis.WithMetrics(a), towerredis.WithTimeout(time.Second))
	if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
		t.Fatalf("the burst's token: %v", err)
	}
	a.arm("Throttled+1")
	towertest.Panics(t, "armed: Throttled+1", func() { tower.Call[string, string](t.Context(), r, "k") })
	if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 1 || o != 0 {
		t.Errorf("inner service got %d calls, %d outstanding; want 1, 0", n, o)
	}
}

// A panic in a Concurrency's sink goes up to the caller, and the lease
// the caller got, or that Redis may have granted it, is given back
// first: none is left in Redis, none is renewed, and the next caller gets
// one at once.
func TestLeaseSinkPanics(t *testing.T) {
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	for i, what := range []string{"Waiting+1", "Waiting-1", "InFlight+1", "InFlight-1"} {
		t.Run(what, func(t *testing.T) {
			a := newArmed()
			name := "sinkpanic" + strconv.Itoa(i)
			c := towerredis.NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), name, 1, 5*time.Second,
				towerredis.WithMetrics(a), towerredis.WithPollInterval(time.Millisecond), leasePatient)
			panics, after := func() { c.Ready(t.Context()) }, func() {}
			switch what {
			case "Waiting+1":
				// A second caller waits for the lease the first holds.
				p, err := c.Ready(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				a.arm(what)
				after = p.Release
			case "Waiting-1":
				// A second caller waits for the lease the first holds,
				// which is released once it waits.
				p, err := c.Ready(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				a.arm(what)
				go func() {
					<-a.waits
					p.Release()
				}()
			case "InFlight+1":
				a.arm(what)
			case "InFlight-1":
				p, err := c.Ready(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				a.arm(what)
				panics = func() { p.Call(t.Context(), "x") }
			}
			towertest.Panics(t, "armed: "+what, panics)
			after()
			if n := leaseCard(t, rdb, name); n != 0 {
				t.Errorf("%d leases in Redis after the panic, want 0", n)
			}
			if held := towerredis.HeldLeases(c); held != 0 {
				t.Errorf("the limiter renews %d leases after the panic, want 0", held)
			}
			if p, ok := leaseReadyNow(t, c); !ok {
				t.Error("ReadyNow after the panic: no lease, want one")
			} else {
				p.Release()
			}
		})
	}
}
