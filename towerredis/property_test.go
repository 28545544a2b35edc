package towerredis

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/redistest"
	"github.com/towergo/tower/towertest"
)

// The property tests of package limit, on the fleet's limits against a
// real redis-server: callers that arrive at random and wait, give up at a
// deadline or by a cancel, hold a permit and call or release it unused,
// or probe (towertest.RandomCallers), and the token bucket's bound
// checked over every pair of admissions. In a testing/synctest bubble,
// with the script on the bubble's clock, the instants are exact; the last
// test runs one on the real clock, where instants read a round trip from
// Redis's need a slack.

// recordKeys is an inner service that records, per request (its key),
// the instants after start at which requests reach it.
type recordKeys struct {
	start time.Time
	mu    sync.Mutex
	at    map[string][]time.Duration
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

// resolution is the slack of the runs in a bubble: the script reads the
// clock to the microsecond, Redis's resolution, so a token is used here
// up to a microsecond after its instant in the bucket (never before), and
// two tokens may be used up to a microsecond less than an interval apart.
const resolution = time.Microsecond

// propertySeeds is how many runs each setting makes: each run's round
// trips are real, so fewer than package limit's.
const propertySeeds = 12

func TestBucketPropertyBurstBound(t *testing.T) {
	srv := redistest.Start(t)
	for _, tt := range []struct {
		name         string
		burst, batch int
	}{{"Burst1", 1, 1}, {"Burst3", 3, 1}, {"Burst3Batch3", 3, 3}} {
		for seed := range uint64(propertySeeds) {
			t.Run(fmt.Sprintf("%sSeed%d", tt.name, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := NewBucket[string, string](okService, bubbleClient(t, srv.Addr()), t.Name(), 10, time.Second, tt.burst, WithBatch(tt.batch))
					r.b.clock = bubbleNow
					callers := towertest.RandomCallers(seed, 40, 2*time.Second, 300*time.Millisecond)
					at := towertest.Drive[string, string](r, callers, func(towertest.Caller) string { return "x" })
					// A batch lets a replica use up to n-1 tokens of a batch
					// after their instants: the doc's burst + n-1.
					checkRun(t, at, tt.burst+tt.batch-1, 100*time.Millisecond, resolution)
				})
			})
		}
	}
}

func TestKeyedPropertyBurstBound(t *testing.T) {
	srv := redistest.Start(t)
	for _, burst := range []int{1, 3} {
		for seed := range uint64(propertySeeds) {
			t.Run(fmt.Sprintf("Burst%dSeed%d", burst, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					inner := &recordKeys{start: time.Now(), at: map[string][]time.Duration{}}
					r := NewKeyed[string, string](inner, bubbleClient(t, srv.Addr()), t.Name(), func(k string) string { return k },
						10, time.Second, burst, WithMaxWait(400*time.Millisecond))
					r.b.clock = bubbleNow
					callers := towertest.RandomCallers(seed, 60, 2*time.Second, 300*time.Millisecond)
					towertest.Drive[string, string](r, callers, func(c towertest.Caller) string { return []string{"a", "b"}[c.Index%2] })
					for _, key := range []string{"a", "b"} {
						checkRun(t, inner.at[key], burst, 100*time.Millisecond, resolution)
					}
				})
			})
		}
	}
}

// On the real clock, Redis's: a Bucket and a Keyed of burst 1, a token
// every 200ms, whose admissions are read here, up to a round trip and a
// wake-up after Redis's instants: a slack of half an interval, which still
// tells two admissions at one instant from two an interval apart. Every
// wait is bounded by the callers' patience and the run's length.
func TestBucketPropertyRealClock(t *testing.T) {
	srv := redistest.Start(t)
	callers := towertest.RandomCallers(1, 24, 2*time.Second, 400*time.Millisecond)
	t.Run("Bucket", func(t *testing.T) {
		t.Parallel()
		r := NewBucket[string, string](okService, newClient(t, srv.Addr()), "real", 5, time.Second, 1, WithTimeout(time.Second))
		at := towertest.Drive[string, string](r, callers, func(towertest.Caller) string { return "x" })
		checkRun(t, at, 1, 200*time.Millisecond, 100*time.Millisecond)
	})
	t.Run("Keyed", func(t *testing.T) {
		t.Parallel()
		inner := &recordKeys{start: time.Now(), at: map[string][]time.Duration{}}
		r := NewKeyed[string, string](inner, newClient(t, srv.Addr()), "real", func(k string) string { return k },
			5, time.Second, 1, WithMaxWait(time.Second), WithTimeout(time.Second))
		towertest.Drive[string, string](r, callers, func(towertest.Caller) string { return "k" })
		checkRun(t, inner.at["k"], 1, 200*time.Millisecond, 100*time.Millisecond)
	})
}

// checkRun fails t if the admissions at go over the bound, or if there
// are none.
func checkRun(t *testing.T, at []time.Duration, burst int, interval, slack time.Duration) {
	t.Helper()
	if len(at) == 0 {
		t.Fatal("nobody was admitted: the run tests nothing")
	}
	at = slices.Sorted(slices.Values(at)) // appended a wake-up apart on the real clock
	if err := towertest.CheckBurst(at, burst, interval, slack); err != nil {
		t.Fatal(err)
	}
}
