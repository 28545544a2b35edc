package limit

import (
	"math"
	"time"

	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
)

// gcra is the arithmetic of a token bucket of burst tokens that gains one
// every interval, as the generic cell rate algorithm: the whole state is
// tat (theoretical arrival time), the instant the bucket is full again if
// nobody takes a token. Taking a token moves tat to max(tat, now)+interval,
// allowed if that is at most now+span. A full bucket is the same as one
// never used, which lets Keyed forget idle keys. Readings are package
// mono's; every sum saturates, so a far limit never wraps into the past.
type gcra struct {
	interval time.Duration // one token's time: per/num, rounded up
	span     time.Duration // burst * interval: how far ahead tat may run
}

// newGCRA returns the arithmetic of num tokens per period with room for
// burst at once, or panics naming fn and the parameter out of range.
func newGCRA(fn string, num int, per time.Duration, burst int) gcra {
	option.PanicIf(num < 1, "%s: num must be at least 1, got %d", fn, num)
	option.PanicIf(per <= 0, "%s: per must be positive, got %v", fn, per)
	option.PanicIf(int64(num) > int64(per), "%s: num must be at most per in nanoseconds (a token per nanosecond), got %d per %v", fn, num, per)
	option.PanicIf(burst < 1, "%s: burst must be at least 1, got %d", fn, burst)
	interval := (per + time.Duration(num) - 1) / time.Duration(num)
	option.PanicIf(int64(burst) > math.MaxInt64/int64(interval), "%s: burst %d of tokens every %v is longer than a Duration holds", fn, burst, interval)
	return gcra{interval: interval, span: time.Duration(burst) * interval}
}

// take takes n tokens (1 <= n <= burst) at now from the bucket at tat. It
// returns the new tat and 0, or, if they are not there, tat unchanged and
// how long until they are.
func (g gcra) take(tat, now time.Duration, n int) (time.Duration, time.Duration) {
	base, need := max(tat, now), time.Duration(n)*g.interval
	// Subtracted before added, so that a tat saturated at the largest
	// Duration still refuses: the sum would saturate too.
	if ready := base - (g.span - need); ready > now {
		return tat, ready - now
	}
	return mono.Add(base, need), 0
}

// reserve takes a token at now whatever the bucket holds, and returns the
// new tat, which is the token's mark for giveBack, and how long until the
// token may be used.
func (g gcra) reserve(tat, now time.Duration) (time.Duration, time.Duration) {
	base := max(tat, now)
	return mono.Add(base, g.interval), max(0, base-(g.span-g.interval)-now)
}

// giveBack returns, at now, the unused token of mark to the bucket at tat,
// and returns the new tat. Only the last token taken (tat == mark) goes
// back: after a later take, moving tat back would hand that taker's
// instant to the next one too.
func (g gcra) giveBack(tat, mark, now time.Duration) time.Duration {
	if tat != mark || tat == math.MaxInt64 {
		return tat // taken after, or saturated: a limit that never refills stays so
	}
	return max(tat-g.interval, now)
}

// full reports whether the bucket at tat is full at now.
func (g gcra) full(tat, now time.Duration) bool { return tat <= now }
