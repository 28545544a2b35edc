package towerredis

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/towerredis/redistest"
)

// scriptBucket returns the bucket of a limit of num per period with room
// for burst, on a fresh Redis, whose script reads its clock from *now
// (microseconds), and a client of that Redis.
func scriptBucket(t *testing.T, num int, per time.Duration, burst int, now *int64) (*gcra, []string, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr())
	b := newGCRA("test", c, "arith", num, per, burst, bucketOptions("test", nil))
	b.clock = func() int64 { return *now }
	return &b, []string{"{tower:rate:arith}"}, c
}

// The script's arithmetic, exactly, at its boundaries: a bucket of 3
// tokens, one a second (I µs), with Redis's clock replaced by the test's
// (a second, so that no key expires on Redis's real clock during the
// test). Each step states what the bucket holds and what the script
// answers: the tokens granted, how long from now until the first of them
// (or until the next token), and the new tat, which the key holds, with a
// time to live of the time until the bucket is full again, in
// milliseconds rounded up. It is package limit's GCRA, on microseconds.
func TestScriptArithmetic(t *testing.T) {
	const (
		T = 1_700_000_000_000_000 // µs, about Redis's clock in 2023
		I = 1_000_000             // the interval, µs
	)
	var now int64
	b, keys, c := scriptBucket(t, 1, time.Second, 3, &now)
	if b.interval != time.Second {
		t.Fatalf("interval = %v, want 1s", b.interval)
	}
	steps := []struct {
		what          string
		at            int64 // µs after T
		want, maxWait int64 // giving back (want < 0): maxWait is the mark, µs after T
		g, wait, tat  int64 // tat: µs after T
	}{
		{"a fresh bucket is full: one token, the bucket short of one", 0, 1, 0, 1, -2 * I, I},
		{"five asked, two left: both granted", 0, 5, 0, 2, -I, 3 * I},
		{"empty: nothing, the next token in one interval", 0, 1, 0, 0, I, 3 * I},
		{"a max wait 1µs short of the next token: nothing", 0, 1, I - 1, 0, I, 3 * I},
		{"a max wait of exactly the next token: reserved", 0, 1, I, 1, I, 4 * I},
		{"1µs before the reserved token's successor: nothing, 1µs to go", 2*I - 1, 1, 0, 0, 1, 4 * I},
		{"at that instant: granted now", 2 * I, 1, 0, 1, 0, 5 * I},
		{"three asked, room for two within the max wait: two reserved", 2 * I, 3, 2*I + I/2, 2, I, 7 * I},
		{"one more within a max wait 1µs short: nothing", 2 * I, 1, 3*I - 1, 0, 3 * I, 7 * I},
		{"two given back with the mark their take answered: tat two intervals earlier", 2 * I, -2, 7 * I, 0, 0, 5 * I},
		{"one given back with a mark a later take moved on from: lost", 2 * I, -1, 7 * I, 0, 0, 5 * I},
		{"ten given back: tat no earlier than now, the bucket full", 2 * I, -10, 5 * I, 0, 0, 2 * I},
		{"full again: three of ten asked, the burst", 2 * I, 10, 0, 3, -2 * I, 5 * I},
		{"long idle: full, never more than the burst", 1000 * I, 4, 0, 3, -2 * I, 1003 * I},
		{"far beyond the burst: n tokens reserved, spaced", 1000 * I, 3, 10 * I, 3, I, 1006 * I},
		{"1µs before the tat: a ttl 1µs past a second, rounded up", 1006*I - 1, 1, 0, 1, 1 - 2*I, 1007 * I},
		{"at the tat, the bucket is full", 1007 * I, 1, 0, 1, -2 * I, 1008 * I},
	}
	for _, s := range steps {
		now = T + s.at
		arg4 := s.maxWait
		if s.want < 0 {
			arg4 += T
		}
		g, err := b.run(t.Context(), keys, int(s.want), arg4)
		if err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if int64(g.n) != s.g || int64((g.due-g.at)/time.Microsecond) != s.wait || g.tat != T+s.tat {
			t.Errorf("%s: got %d tokens, first in %dµs, tat T%+d; want %d, %dµs, T%+d",
				s.what, g.n, (g.due-g.at)/time.Microsecond, g.tat-T, s.g, s.wait, s.tat)
		}
		checkKey(t, s.what, c, keys[0], T+s.tat, now, s.g > 0 || s.want < 0)
	}
}

// checkKey fails t unless key holds tat, or is absent if tat is not after
// now: a full bucket is no key. If the script wrote the key, its time to
// live must be (tat-now)/1000 ms rounded up, give or take the real time
// since.
func checkKey(t *testing.T, what string, c *redis.Client, key string, tat, now int64, written bool) {
	t.Helper()
	got, err := c.Get(t.Context(), key).Result()
	if tat <= now {
		if !errors.Is(err, redis.Nil) {
			t.Errorf("%s: the key holds %q (%v), want none: the bucket is full", what, got, err)
		}
		return
	}
	if got != strconv.FormatInt(tat, 10) {
		t.Errorf("%s: the key holds %q (%v), want %d", what, got, err, tat)
	}
	if !written {
		return
	}
	ttl, err := c.PTTL(t.Context(), key).Result()
	want := time.Duration((tat-now+999)/1000) * time.Millisecond
	if err != nil || ttl > want || ttl < want-500*time.Millisecond {
		t.Errorf("%s: the key's time to live is %v (%v), want %v", what, ttl, err, want)
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
// and refusals (a max wait 1µs short of it), at random instants, for
// random rates and bursts: the same grants, waits and tats. (The keys'
// times to live are checked in TestScriptArithmetic.)
func TestScriptMatchesLimitGCRA(t *testing.T) {
	const T = 1_700_000_000_000_000
	var now int64
	b, keys, c := scriptBucket(t, 1, time.Second, 1, &now)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		interval := int64(1 + rng.IntN(2000))
		burst := 1 + rng.IntN(5)
		b.interval, b.intervalArg, b.burstArg = time.Duration(interval)*time.Microsecond, interval, int64(burst)
		m := gcraModel{interval: interval, span: int64(burst) * interval}
		key := []string{keys[0] + strconv.Itoa(round)}
		tat := int64(0) // no key: a full bucket
		now = T
		for step := range 40 {
			now += rng.Int64N(2 * interval)
			// The key holds the model's state, with no time to live: the
			// script's would end on Redis's real clock, which this test
			// does not follow. Only the arithmetic is compared here.
			if tat == 0 {
				c.Del(t.Context(), key[0])
			} else {
				c.Set(t.Context(), key[0], tat, 0)
			}
			mtat, mwait := m.take(tat, now)
			maxWait := int64(0)
			if mwait > 0 && rng.IntN(2) == 0 {
				maxWait = mwait - int64(rng.IntN(2)) // the wait, or 1µs short
				if maxWait == mwait {
					mtat, _ = m.reserve(tat, now)
				}
			}
			g, err := b.ask(t.Context(), key, 1, time.Duration(maxWait)*time.Microsecond)
			if err != nil {
				t.Fatal(err)
			}
			granted := mwait == 0 || maxWait == mwait
			wait := int64((g.due - g.at) / time.Microsecond)
			if (g.n == 1) != granted || max(wait, 0) != mwait || (granted && g.tat != mtat) {
				t.Fatalf("round %d (interval %dµs, burst %d), step %d at T%+d with max wait %dµs: got %d tokens, wait %dµs, tat T%+d; want granted %v, wait %dµs, tat T%+d",
					round, interval, burst, step, now-T, maxWait, g.n, wait, g.tat-T, granted, mwait, mtat-T)
			}
			if granted {
				tat = mtat
			}
		}
	}
}

// A reply is the script's only if it is three integers, grants between 0
// and the tokens asked, and, refusing, says the next token is in the
// future; anything else is a bad reply, which never grants.
func TestScriptReply(t *testing.T) {
	for _, tt := range []struct {
		reply any
		want  int
		ok    bool
	}{
		{[]any{int64(1), int64(-5), int64(9)}, 1, true},
		{[]any{int64(3), int64(0), int64(9)}, 3, true},
		{[]any{int64(4), int64(0), int64(9)}, 3, false}, // more than asked
		{[]any{int64(0), int64(1), int64(9)}, 3, true},  // refused, next token in 1µs
		{[]any{int64(0), int64(0), int64(9)}, 3, false}, // refused, next token now: would spin
		{[]any{int64(0), int64(-1), int64(9)}, 1, false},
		{[]any{int64(-1), int64(5), int64(9)}, 1, false},
		{[]any{int64(0), int64(0), int64(9)}, -1, true}, // given back
		{[]any{int64(1), int64(0), int64(9)}, -1, false},
		{[]any{int64(1), int64(0)}, 1, false},
		{[]any{int64(1), int64(0), int64(9), int64(9)}, 1, false},
		{[]any{int64(1), "0", int64(9)}, 1, false},
		{"bad key: WRONGTYPE", 1, false},
		{int64(1), 1, false},
		{nil, 1, false},
	} {
		if _, ok := rateReply(tt.reply, tt.want); ok != tt.ok {
			t.Errorf("rateReply(%#v, %d) ok = %v, want %v", tt.reply, tt.want, ok, tt.ok)
		}
	}
}
