package towerredis_test

import (
	"context"
	"sync"
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
	opts = append([]towerredis.BucketOption{towerredis.WithObserver(rt.Observe), towerredis.WithTimeout(time.Second)}, opts...)
	return towerredis.NewBucket[string, string](inner, newClient(t, addr), name, num, per, burst, opts...), inner, rt
}

// Helpers the in-package tests have too, through export_test.go.
type (
	counting = towerredis.Counting
	trips    = towerredis.Trips
)

var (
	newClient     = towerredis.NewClient
	blackHole     = towerredis.BlackHole
	closedPort    = towerredis.ClosedPort
	within        = towerredis.Within
	refused       = towerredis.Refused
	okService     = towerredis.OkService
	leaseClient   = towerredis.LeaseClient
	leasePatient  = towerredis.LeasePatient
	leaseEcho     = towerredis.LeaseEcho
	leaseCard     = towerredis.LeaseCard
	leaseReadyNow = towerredis.LeaseReadyNow
	doneCtx       = towerredis.DoneCtx
	mustReady     = towerredis.MustReady
)
