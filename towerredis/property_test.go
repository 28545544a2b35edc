package towerredis_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
	"github.com/towergo/tower/towertest"
)

// The property tests of package limit, on the fleet's limits against a
// real redis-server, on the real clock, Redis's: callers that arrive at
// random and wait, give up at a deadline or by a cancel, hold a permit
// and call or release it unused, or probe (towertest.RandomCallers), and
// the token bucket's bound checked over every pair of admissions. A token
// every 400ms; admissions are read here, up to a round trip and a wake-up
// after Redis's instants: a slack of half an interval, which a busy
// machine's delays stay within, and which still tells two admissions at
// one instant from two an interval apart. The runs go at once, each on
// keys of its own, so the whole takes about one run's 3s; every wait is
// bounded by the callers' patience and the run's length.
func TestPropertyBurstBound(t *testing.T) {
	t.Parallel() // it waits on the real clock: beside the other such tests
	const (
		interval = 400 * time.Millisecond
		slack    = interval / 2
		seeds    = 3
	)
	srv := redistest.Start(t)
	callers := func(seed uint64) []towertest.Caller {
		return towertest.RandomCallers(seed, 16, 1500*time.Millisecond, 2*interval)
	}
	// check fails t if the admissions at go over the bound, or if there
	// are none.
	check := func(t *testing.T, at []time.Duration, burst int) {
		t.Helper()
		if len(at) == 0 {
			t.Fatal("nobody was admitted: the run tests nothing")
		}
		at = slices.Sorted(slices.Values(at)) // appended a wake-up apart
		if err := towertest.CheckBurst(at, burst, interval, slack); err != nil {
			t.Fatal(err)
		}
	}
	g := &together{t: t}
	defer g.wait()
	for _, tt := range []struct {
		name         string
		burst, batch int
	}{{"Burst1", 1, 1}, {"Burst3", 3, 1}, {"Burst3Batch3", 3, 3}} {
		for seed := range uint64(seeds) {
			name := fmt.Sprintf("Bucket%sSeed%d", tt.name, seed)
			g.run(name, func(t *testing.T) {
				r := towerredis.NewBucket[string, string](okService, newClient(t, srv.Addr()), name, 5, 2*time.Second, tt.burst,
					towerredis.WithBatch(tt.batch), towerredis.WithTimeout(time.Second))
				at := towertest.Drive[string, string](r, callers(seed), func(towertest.Caller) string { return "x" })
				// A batch lets a replica use up to n-1 tokens of a batch
				// after their instants: the doc's burst + n-1.
				check(t, at, tt.burst+tt.batch-1)
			})
		}
	}
	for _, burst := range []int{1, 3} {
		for seed := range uint64(seeds) {
			name := fmt.Sprintf("KeyedBurst%dSeed%d", burst, seed)
			g.run(name, func(t *testing.T) {
				inner := newRecordKeys()
				r := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), name, func(k string) string { return k },
					5, 2*time.Second, burst, towerredis.WithMaxWait(4*interval), towerredis.WithTimeout(time.Second))
				towertest.Drive[string, string](r, callers(seed), func(c towertest.Caller) string { return []string{"a", "b"}[c.Index%2] })
				for _, key := range []string{"a", "b"} {
					check(t, inner.at[key], burst)
				}
			})
		}
	}
}
