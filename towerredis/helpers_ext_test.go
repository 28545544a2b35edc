package towerredis_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis"
)

// The helpers of the tests of the public API (package towerredis_test).

// redisNow returns Redis's clock, the script's, in microseconds.
func redisNow(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro()
}

// okService is an inner service that answers "ok".
var okService = tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return "ok", nil })

// counting is a service that counts its calls and its outstanding
// permits, to check that a limit gives back what it holds.
type counting struct {
	calls, outstanding atomic.Int64
}

func (c *counting) Ready(context.Context) (tower.Permit[string, string], error) {
	c.outstanding.Add(1)
	return tower.NewPermit[string, string](c, 0), nil
}

func (c *counting) CallReserved(context.Context, uint64, string) (string, error) {
	c.outstanding.Add(-1)
	c.calls.Add(1)
	return "ok", nil
}

func (c *counting) ReleaseReserved(uint64) { c.outstanding.Add(-1) }

// trips counts round trips and their errors, through WithObserver.
type trips struct {
	n, errs atomic.Int64
	mu      sync.Mutex
	last    error
}

func (c *trips) observe(rt towerredis.RoundTrip) {
	c.n.Add(1)
	if rt.Err != nil {
		c.errs.Add(1)
		c.mu.Lock()
		c.last = rt.Err
		c.mu.Unlock()
	}
}

func (c *trips) lastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// recordKeys is an inner service that records, per request (its key),
// the instants after start at which requests reach it.
type recordKeys struct {
	start time.Time
	mu    sync.Mutex
	at    map[string][]time.Duration
}

func newRecordKeys() *recordKeys {
	return &recordKeys{start: time.Now(), at: map[string][]time.Duration{}}
}

func (r *recordKeys) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.NewPermit[string, string](r, 0), nil
}

func (r *recordKeys) CallReserved(_ context.Context, _ uint64, key string) (string, error) {
	r.mu.Lock()
	r.at[key] = append(r.at[key], time.Since(r.start))
	r.mu.Unlock()
	return key, nil
}

func (r *recordKeys) ReleaseReserved(uint64) {}

// poll waits, at most 10s, until cond holds, and fails t if it never
// does.
func poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// bubbleClient is newClient for a client made inside a testing/synctest
// bubble, and closed in it, so that none of its goroutines outlives the
// bubble. A round trip dials once: go-redis's retries of a dial would
// sleep on the bubble's clock.
func bubbleClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, Protocol: 2, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

// late is how much later than its instant a test on the real clock lets
// a caller be served: a round trip and a wake-up on a busy machine.
const late = 500 * time.Millisecond

// together runs subtests of t all at once, each on a goroutine of its
// own, and waits for them: for subtests that mostly wait on the real
// clock. Unlike t.Parallel, it is not bounded by -parallel (1 under
// -cpu 1), so a test takes about its longest subtest's time.
type together struct {
	t  *testing.T
	wg sync.WaitGroup
}

// run starts the subtest f named name.
func (g *together) run(name string, f func(*testing.T)) {
	g.wg.Go(func() { g.t.Run(name, f) })
}

// wait waits for the subtests that run started.
func (g *together) wait() { g.wg.Wait() }

// leaseClient returns a client of the server at addr, closed when t ends.
func leaseClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// leasePatient bounds round trips by half a second, for tests whose
// leases live long and whose every round trip must succeed, even on a busy
// machine.
var leasePatient = towerredis.WithTimeout(500 * time.Millisecond)

// leaseEcho is an inner service that answers its request.
var leaseEcho = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })

// leaseCard returns how many leases the limit named name holds in Redis.
func leaseCard(t testing.TB, c *redis.Client, name string) int64 {
	t.Helper()
	n, err := c.ZCard(context.Background(), "{"+towerredis.DefaultPrefix+":lease:"+name+"}").Result()
	if err != nil {
		t.Fatalf("ZCARD: %v", err)
	}
	return n
}

// leaseReadyNow asks svc for a permit with a done ctx, and reports whether
// it got one that holds a lease or was admitted (not one that refuses).
func leaseReadyNow(t testing.TB, svc tower.Service[string, string]) (tower.Permit[string, string], bool) {
	t.Helper()
	p, ok, err := tower.ReadyNow(svc)
	if err != nil {
		t.Fatalf("ReadyNow: %v", err)
	}
	if ok && towerredis.IsRefusal(&p) {
		// The limit fails closed and Redis did not answer within the
		// timeout (a busy machine): no lease was granted.
		p.Release()
		return tower.Permit[string, string]{}, false
	}
	return p, ok
}

// slack is how much later than its exact instant a test on the real clock
// lets a wait end, on a busy machine.
const slack = 250 * time.Millisecond

// newTestBucket returns a Bucket on addr around a counting service, with its
// round trips counted.
func newTestBucket(t *testing.T, addr, name string, num int, per time.Duration, burst int, opts ...towerredis.BucketOption) (*towerredis.Bucket[string, string], *counting, *trips) {
	t.Helper()
	inner, rt := &counting{}, &trips{}
	// A second per round trip unless the test says otherwise: a busy
	// machine must not make a test's limit fail open by surprise.
	opts = append([]towerredis.BucketOption{towerredis.WithObserver(rt.observe), towerredis.WithTimeout(time.Second)}, opts...)
	return towerredis.NewBucket[string, string](inner, newClient(t, addr), name, num, per, burst, opts...), inner, rt
}

// mustReady returns svc's permit, and fails t if Ready fails.
func mustReady(t *testing.T, ctx context.Context, svc tower.Service[string, string]) tower.Permit[string, string] {
	t.Helper()
	p, err := svc.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return p
}

// doneCtx returns a context already cancelled.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// Helpers the in-package tests have too, through export_test.go.
var (
	newClient  = towerredis.NewClient
	blackHole  = towerredis.BlackHole
	closedPort = towerredis.ClosedPort
	within     = towerredis.Within
	refused    = towerredis.Refused
)
