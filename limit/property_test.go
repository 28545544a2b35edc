package limit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// The property tests drive a limit with callers that come at random
// instants and behave at random (towertest.RandomCallers): some wait as
// long as it takes, some give up at a deadline, some are cancelled with no
// deadline, some release their permit unused after holding it a while,
// some hold it and then call, and some only probe with a done ctx. The
// limit's bound is checked over every pair of admissions, so that a
// give-back that hands one token to two callers shows wherever it
// happens in the run.

// seeds is how many random runs each property test makes per setting.
const seeds = 64

// A Bucket stays within burst + d/interval over every stretch d, whoever
// gives up or releases unused, and when.
func TestBucketPropertyBurstBound(t *testing.T) {
	for _, burst := range []int{1, 3} {
		for seed := range uint64(seeds) {
			t.Run(fmt.Sprintf("Burst%dSeed%d", burst, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b := limit.NewBucket(echo, 10, time.Second, burst)
					callers := towertest.RandomCallers(seed, 60, 3*time.Second, 300*time.Millisecond)
					at := towertest.Drive(svc(b), callers, func(towertest.Caller) string { return "x" })
					checkAdmissions(t, at, burst, 100*time.Millisecond)
				})
			})
		}
	}
}

// A Keyed limit keeps each key within burst + d/interval over every
// stretch d, whoever gives up while waiting for the key's token, and
// when; keys do not use each other's tokens.
func TestKeyedPropertyBurstBound(t *testing.T) {
	for _, burst := range []int{1, 3} {
		for seed := range uint64(seeds) {
			t.Run(fmt.Sprintf("Burst%dSeed%d", burst, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					var mu sync.Mutex
					byKey := map[string][]time.Duration{}
					inner := tower.ServiceFunc[string, string](func(_ context.Context, key string) (string, error) {
						mu.Lock()
						byKey[key] = append(byKey[key], time.Since(start))
						mu.Unlock()
						return key, nil
					})
					k := limit.NewKeyed[string, string](inner, ident, 10, time.Second, burst, limit.WithMaxWait(400*time.Millisecond))
					callers := towertest.RandomCallers(seed, 80, 3*time.Second, 300*time.Millisecond)
					towertest.Drive(svc(k), callers, func(c towertest.Caller) string { return []string{"a", "b"}[c.Index%2] })
					for _, key := range []string{"a", "b"} {
						checkAdmissions(t, byKey[key], burst, 100*time.Millisecond)
					}
				})
			})
		}
	}
}

// checkAdmissions fails t if the instants at, in order, go over the
// bound, or if there are none.
func checkAdmissions(t *testing.T, at []time.Duration, burst int, interval time.Duration) {
	t.Helper()
	if len(at) == 0 {
		t.Fatal("nobody was admitted: the run tests nothing")
	}
	if !slices.IsSorted(at) {
		t.Fatalf("admissions out of order: %v", at)
	}
	if err := towertest.CheckBurst(at, burst, interval, 0); err != nil {
		t.Fatal(err)
	}
}

// A Rate lets at most num through within a window, so at most twice num
// within any stretch shorter than a window (the end of one and the start
// of the next), whoever gives up or releases unused, and when.
func TestRatePropertyWindowBound(t *testing.T) {
	const num, per = 3, 300 * time.Millisecond
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("Seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := limit.NewRate(echo, num, per)
				callers := towertest.RandomCallers(seed, 60, 3*time.Second, 300*time.Millisecond)
				at := towertest.Drive(svc(r), callers, func(towertest.Caller) string { return "x" })
				for i := range at {
					n := 0
					for j := i; j < len(at) && at[j]-at[i] < per; j++ {
						n++
					}
					if n > 2*num {
						t.Fatalf("%d admissions within %v of %v, want at most %d", n, per, at[i], 2*num)
					}
				}
			})
		})
	}
}
