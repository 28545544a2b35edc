package limit

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The arithmetic at its boundaries: a bucket of burst 3, a token every
// 100ms, starting full at 1s.
func TestGCRAArithmetic(t *testing.T) {
	g := newGCRA("test", 10, time.Second, 3)
	if g.interval != 100*time.Millisecond || g.span != 300*time.Millisecond {
		t.Fatalf("interval %v span %v, want 100ms and 300ms", g.interval, g.span)
	}
	now := time.Second
	tat := time.Duration(0) // never used: full
	if !g.full(tat, now) {
		t.Fatal("a bucket never used is not full")
	}
	for i, want := range []time.Duration{1100, 1200, 1300} {
		var wait time.Duration
		tat, wait = g.take(tat, now, 1)
		if wait != 0 || tat != want*time.Millisecond {
			t.Fatalf("take %d: tat %v wait %v, want %vms and 0", i, tat, wait, want)
		}
	}
	// Empty: the next token is there at 1.1s, exactly.
	if got, wait := g.take(tat, now, 1); got != tat || wait != 100*time.Millisecond {
		t.Fatalf("take from an empty bucket: tat %v wait %v, want %v and 100ms", got, wait, tat)
	}
	if got, wait := g.take(tat, now+100*time.Millisecond-1, 1); got != tat || wait != 1 {
		t.Fatalf("take 1ns before the token: tat %v wait %v, want unchanged and 1ns", got, wait)
	}
	if got, wait := g.take(tat, now+100*time.Millisecond, 1); wait != 0 || got != 1400*time.Millisecond {
		t.Fatalf("take at the token's instant: tat %v wait %v, want 1.4s and 0", got, wait)
	}
	// Two at once need two tokens: at 1.2s.
	if _, wait := g.take(tat, now+100*time.Millisecond, 2); wait != 100*time.Millisecond {
		t.Fatalf("take 2 with one there: wait %v, want 100ms", wait)
	}
	// Full again at tat: the bucket holds burst tokens, no more.
	if !g.full(tat, tat) || g.full(tat, tat-1) {
		t.Fatal("full is not exactly tat <= now")
	}
	// Reserve ahead: a token 100ms from now, then give it back.
	next, wait := g.reserve(tat, now)
	if next != 1400*time.Millisecond || wait != 100*time.Millisecond {
		t.Fatalf("reserve: tat %v wait %v, want 1.4s and 100ms", next, wait)
	}
	if back := g.giveBack(next, next, now); back != tat {
		t.Fatalf("giveBack: %v, want %v", back, tat)
	}
	// A token taken after it holds the next instant: nothing goes back.
	later, _ := g.reserve(next, now)
	if back := g.giveBack(later, next, now); back != later {
		t.Fatalf("giveBack with a later take: %v, want %v unchanged", back, later)
	}
	if back := g.giveBack(now+50*time.Millisecond, now+50*time.Millisecond, now); back != now {
		t.Fatalf("giveBack past full: %v, want now (%v)", back, now)
	}
	if back := g.giveBack(math.MaxInt64, math.MaxInt64, now); back != math.MaxInt64 {
		t.Fatalf("giveBack of a saturated tat: %v", back)
	}
}

// A period that does not divide by num is rounded up, so the rate is never
// above num per period.
func TestGCRAIntervalRoundsUp(t *testing.T) {
	if g := newGCRA("test", 3, time.Second, 1); g.interval != 333333334 {
		t.Fatalf("3 per second: interval %d, want 333333334", g.interval)
	}
	if g := newGCRA("test", 1, 1, 1); g.interval != 1 {
		t.Fatalf("1 per ns: interval %d", g.interval)
	}
	g := newGCRA("test", 1, math.MaxInt64, 1)
	tat, wait := g.take(0, time.Second, 1)
	if wait != 0 || tat != math.MaxInt64 {
		t.Fatalf("a period too long for the clock: tat %v wait %v, want saturated", tat, wait)
	}
	if _, wait := g.take(tat, time.Hour, 1); wait <= 0 {
		t.Fatal("a saturated bucket gave a second token")
	}
}

func TestGCRABadInput(t *testing.T) {
	for _, c := range []struct {
		num   int
		per   time.Duration
		burst int
		want  string
	}{
		{0, time.Second, 1, "num must be at least 1, got 0"},
		{1, 0, 1, "per must be positive, got 0s"},
		{1, -time.Second, 1, "per must be positive"},
		{2, 1, 1, "num must be at most per in nanoseconds"},
		{1, time.Second, 0, "burst must be at least 1, got 0"},
		{1, time.Second, -1, "burst must be at least 1"},
		{1, time.Hour, math.MaxInt32 * 4, "longer than a Duration holds"},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "fn: ") || !strings.Contains(msg, c.want) {
					t.Errorf("newGCRA(%d, %v, %d) panicked %q, want %q", c.num, c.per, c.burst, msg, c.want)
				}
			}()
			newGCRA("fn", c.num, c.per, c.burst)
		}()
	}
}
