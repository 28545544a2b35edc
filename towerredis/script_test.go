package towerredis_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/towerredis/redistest"
)

// The tests of rate.lua, the script that every Bucket and Keyed runs, on
// Redis's own clock. The script's whole state is the key's tat, and its
// arithmetic depends only on tat - now: so each step sets the key to a
// tat relative to Redis's clock, read just before, and checks the answer
// relative to that reading. The script reads the clock a moment later,
// d at most (the step's real time, measured): a wait it answers may be
// up to d shorter, and a tat it computes from now up to d later. The
// instants of the steps are an hour apart, and the max waits short of a
// token a minute short, so that a step's outcome never depends on d.

// script is a fresh Redis's client and the GCRA script's source, as the
// package embeds it.
func script(t *testing.T) (*redis.Client, string) {
	t.Helper()
	src, err := os.ReadFile("rate.lua")
	if err != nil {
		t.Fatal(err)
	}
	return newClient(t, redistest.Start(t).Addr()), string(src)
}

// answer is the script's reply to one step, relative to Redis's clock as
// the step began (t0): wait, tat - t0, and d, the step's length; abs is
// the tat as answered.
type answer struct{ g, wait, tat, d, abs int64 }

// step sets key to t0+tat (none if hasKey is false), t0 Redis's clock
// now, runs the script for n tokens with interval and burst, and arg4(t0)
// as its fourth argument, and returns its answer relative to t0.
func step(t *testing.T, c *redis.Client, src, key string, hasKey bool, tat, interval int64, burst, n int, arg4 func(t0 int64) int64) answer {
	t.Helper()
	ctx := t.Context()
	t0 := redisNow(t, c)
	if hasKey {
		if err := c.Set(ctx, key, t0+tat, 0).Err(); err != nil {
			t.Fatal(err)
		}
	} else if err := c.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	v, err := c.Eval(ctx, src, []string{key}, interval, burst, n, arg4(t0)).Int64Slice()
	t1 := redisNow(t, c)
	if err != nil || len(v) != 3 {
		t.Fatalf("the script answered %v (%v), want three integers", v, err)
	}
	return answer{g: v[0], wait: v[1], tat: v[2] - t0, d: t1 - t0, abs: v[2]}
}

// The script's arithmetic at its boundaries: a bucket of 3 tokens, one an
// hour (I). Each step states the tat the key holds, relative to now (none
// if 0 and not kept), and what the script answers: the tokens granted,
// how long from now until the first of them (or until the next token),
// and the new tat, which the key holds, with a time to live of the time
// until the bucket is full again, in milliseconds rounded up. It is
// package limit's GCRA, on microseconds.
func TestScriptArithmetic(t *testing.T) {
	const (
		I   = int64(time.Hour / time.Microsecond) // the interval, µs
		min = int64(time.Minute / time.Microsecond)
	)
	c, src := script(t)
	const key = "{tower:rate:arith}"
	steps := []struct {
		what         string
		key          bool  // the key exists, holding tat
		tat          int64 // µs after now
		n, arg4      int64 // arg4: the max wait; giving back (n < 0), the mark, µs after now
		g, wait, got int64 // got: the new tat, µs after now
		written      bool  // the script writes the key (or deletes it)
	}{
		{"a fresh bucket is full: one token, the bucket short of one", false, 0, 1, 0, 1, -2 * I, I, true},
		{"five asked, two left: both granted", true, I, 5, 0, 2, -I, 3 * I, true},
		{"empty: nothing, the next token in one interval", true, 3 * I, 1, 0, 0, I, 3 * I, false},
		{"a max wait a minute short of the next token: nothing", true, 3 * I, 1, I - min, 0, I, 3 * I, false},
		{"a max wait of the next token's wait as the step began: reserved", true, 3 * I, 1, I, 1, I, 4 * I, true},
		{"a minute before the next token: nothing, a minute to go", true, 2*I + min, 1, 0, 0, min, 2*I + min, false},
		{"at the next token's instant: granted now", true, 2 * I, 1, 0, 1, 0, 3 * I, true},
		{"three asked, room for two within the max wait: two reserved", true, 3 * I, 3, 2*I + I/2, 2, I, 5 * I, true},
		{"one more within a max wait a minute short: nothing", true, 5 * I, 1, 3*I - min, 0, 3 * I, 5 * I, false},
		{"two given back with the mark their take answered: tat two intervals earlier", true, 5 * I, -2, 5 * I, 0, 0, 3 * I, true},
		{"one given back with a mark a later take moved on from: lost", true, 3 * I, -1, 5 * I, 0, 0, 3 * I, false},
		{"one given back to a bucket with no key: lost", false, 0, -1, 0, 0, 0, 0, false},
		{"ten given back: tat no earlier than now, the bucket full", true, 3 * I, -10, 3 * I, 0, 0, 0, true},
		{"full again: three of ten asked, the burst", false, 0, 10, 0, 3, -2 * I, 3 * I, true},
		{"long idle: full, never more than the burst", true, -995 * I, 4, 0, 3, -2 * I, 3 * I, true},
		{"far beyond the burst: n tokens reserved, spaced", true, 3 * I, 3, 10 * I, 3, I, 6 * I, true},
		{"a minute before the tat: one token, the bucket a minute more than one short", true, min, 1, 0, 1, min - 2*I, I + min, true},
		{"at the tat, the bucket is full", true, 0, 1, 0, 1, -2 * I, I, true},
	}
	for _, s := range steps {
		a := step(t, c, src, key, s.key, s.tat, I, 3, int(s.n), func(t0 int64) int64 {
			if s.n < 0 {
				return t0 + s.arg4 // a mark is an instant
			}
			return s.arg4
		})
		if a.d >= min {
			t.Fatalf("%s: the step took %dµs, more than the margins of a minute", s.what, a.d)
		}
		// The script's now is up to d after the step's start: a wait up
		// to d shorter, a tat counted from now up to d later.
		if a.g != s.g || a.wait > s.wait || a.wait < s.wait-a.d || a.tat < s.got || a.tat > s.got+a.d {
			t.Errorf("%s: got %d tokens, first in %dµs, tat now%+d (the step took %dµs); want %d, %dµs, now%+d",
				s.what, a.g, a.wait, a.tat, a.d, s.g, s.wait, s.got)
		}
		checkKey(t, s.what, c, key, a, s.got > 0, s.written)
	}
}

// checkKey fails t unless the key holds the tat a answered, or is absent
// if the bucket is full (held is false); if the script wrote the key, with a time to
// live of the time until then, in milliseconds rounded up, give or take
// the real time since; if it did not, with the none the test set.
func checkKey(t *testing.T, what string, c *redis.Client, key string, a answer, held, written bool) {
	t.Helper()
	got, err := c.Get(t.Context(), key).Result()
	if !held {
		if !errors.Is(err, redis.Nil) {
			t.Errorf("%s: the key holds %q (%v), want none: the bucket is full", what, got, err)
		}
		return
	}
	if got != strconv.FormatInt(a.abs, 10) {
		t.Errorf("%s: the key holds %q (%v), want %d, the tat answered", what, got, err, a.abs)
	}
	ttl, err := c.PTTL(t.Context(), key).Result()
	if !written {
		if err != nil || ttl != -1 {
			t.Errorf("%s: the key's time to live is %v (%v), want none: the script did not write it", what, ttl, err)
		}
		return
	}
	hi := time.Duration((a.tat+999)/1000) * time.Millisecond
	if err != nil || ttl > hi || ttl < hi-500*time.Millisecond {
		t.Errorf("%s: the key's time to live is %v (%v), want %v at most, less the real time since", what, ttl, err, hi)
	}
}

// gcraModel is package limit's GCRA (limit/gcra.go), on microseconds: the
// semantics the script must keep, for one token at a time.
type gcraModel struct{ interval, span int64 }

// take is gcra.take for one token: the new tat and zero, or tat unchanged
// and the wait.
func (g gcraModel) take(tat, now int64) (int64, int64) {
	base := max(tat, now)
	if ready := base - (g.span - g.interval); ready > now {
		return tat, ready - now
	}
	return base + g.interval, 0
}

// reserve is gcra.reserve: the new tat and the wait for the token.
func (g gcraModel) reserve(tat, now int64) (int64, int64) {
	base := max(tat, now)
	return base + g.interval, max(0, base-(g.span-g.interval)-now)
}

// The script agrees with package limit's GCRA over random sequences of
// takes (no wait), reservations (a max wait that covers the next token)
// and refusals (a max wait a second short of it), at random instants, for
// random rates and bursts: the same grants, waits and tats. Intervals and
// instants are whole seconds, so that every wait is zero or a second at
// least, and the script's reading of the clock, a few milliseconds after
// the step's, never changes an outcome. (The keys' times to live are
// checked in TestScriptArithmetic.)
func TestScriptMatchesLimitGCRA(t *testing.T) {
	const sec = int64(time.Second / time.Microsecond)
	c, src := script(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		interval := sec * (1 + rng.Int64N(2000))
		burst := 1 + rng.IntN(5)
		m := gcraModel{interval: interval, span: int64(burst) * interval}
		key := "{tower:rate:model}" + strconv.Itoa(round)
		var tat, now int64 // the model's; tat 0: no key, a full bucket
		for i := range 40 {
			now += sec * rng.Int64N(2*interval/sec)
			mtat, mwait := m.take(tat, now)
			maxWait := int64(0)
			if mwait > 0 && rng.IntN(2) == 0 {
				maxWait = mwait - sec*int64(rng.IntN(2)) // the wait, or a second short
				if maxWait == mwait {
					mtat, _ = m.reserve(tat, now)
				}
			}
			a := step(t, c, src, key, tat != 0, tat-now, interval, burst, 1, func(int64) int64 { return maxWait })
			if a.d >= sec {
				t.Fatalf("a step took %dµs, more than the margins of a second", a.d)
			}
			granted := mwait == 0 || maxWait == mwait
			wait := max(a.wait, 0)
			if (a.g == 1) != granted || wait > mwait || wait < mwait-a.d || (granted && (a.tat < mtat-now || a.tat > mtat-now+a.d)) {
				t.Fatalf("round %d (interval %ds, burst %d), step %d at %ds with max wait %dµs: got %d tokens, wait %dµs, tat now%+d (the step took %dµs); want granted %v, wait %dµs, tat now%+d",
					round, interval/sec, burst, i, now/sec, maxWait, a.g, wait, a.tat, a.d, granted, mwait, mtat-now)
			}
			if granted {
				tat = mtat
			}
		}
	}
}
