package limit

import (
	"fmt"
	"math"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// gcra is the arithmetic of a token bucket of burst tokens that gains one
// token every interval, in the form of the generic cell rate algorithm:
// the bucket's whole state is one instant, its theoretical arrival time
// (tat), the instant at which it will be full again if nobody takes a token
// meanwhile. At now, the bucket is full if tat <= now, and is short of
// ceil((tat-now)/interval) tokens otherwise. Taking a token moves tat on by
// one interval from max(tat, now), and is allowed if the bucket is then
// short of at most burst tokens: if the new tat is at most now+span, where
// span is burst*interval. A bucket that is full carries no information: it
// is the same as one never used, which is what lets a per-key limit forget
// its idle keys exactly.
//
// Readings are those of package mono (durations since the process's base);
// every sum saturates at the largest Duration, so a limit that far away
// never wraps into the past.
type gcra struct {
	interval time.Duration // one token's time: per/num, rounded up
	span     time.Duration // burst * interval: how far ahead tat may run
}

// newGCRA returns the arithmetic of num tokens per period with room for
// burst tokens at once, or panics naming fn and the parameter that is out
// of range. The interval is per/num rounded up to the nanosecond, so the
// rate is never above num per period: 3 per second is a token every
// 333,333,334ns.
func newGCRA(fn string, num int, per time.Duration, burst int) gcra {
	if num < 1 {
		panic(fmt.Sprintf("%s: num must be at least 1, got %d", fn, num))
	}
	if per <= 0 {
		panic(fmt.Sprintf("%s: per must be positive, got %v", fn, per))
	}
	if int64(num) > int64(per) {
		panic(fmt.Sprintf("%s: num must be at most per in nanoseconds (a token per nanosecond), got %d per %v", fn, num, per))
	}
	if burst < 1 {
		panic(fmt.Sprintf("%s: burst must be at least 1, got %d", fn, burst))
	}
	interval := (per + time.Duration(num) - 1) / time.Duration(num)
	if int64(burst) > math.MaxInt64/int64(interval) {
		panic(fmt.Sprintf("%s: burst %d of tokens every %v is longer than a Duration holds", fn, burst, interval))
	}
	return gcra{interval: interval, span: time.Duration(burst) * interval}
}

// take takes n tokens at now from the bucket whose state is tat. If they
// are there, it returns the new tat and a zero wait. If not, it returns tat
// unchanged and how long from now until they are: a caller that comes back
// then, with nobody else taking tokens meanwhile, gets them. n must be
// between 1 and burst.
func (g gcra) take(tat, now time.Duration, n int) (time.Duration, time.Duration) {
	base, need := max(tat, now), time.Duration(n)*g.interval
	// Subtracted before added, so that a tat saturated at the largest
	// Duration still refuses: the sum would saturate too.
	if ready := base - (g.span - need); ready > now {
		return tat, ready - now
	}
	return mono.Add(base, need), 0
}

// reserve takes a token at now whatever the bucket holds: it returns the
// new tat and how long from now the caller must wait before it uses the
// token, zero if the token is there now. The new tat is also the token's
// mark: a caller that gives the token up unused passes it to giveBack.
func (g gcra) reserve(tat, now time.Duration) (time.Duration, time.Duration) {
	base := max(tat, now)
	return mono.Add(base, g.interval), max(0, base-(g.span-g.interval)-now)
}

// giveBack returns, at now, a token whose take left the bucket at mark,
// to the bucket whose state is tat, and returns the new state.
//
// The token goes back only if it is the last one taken (tat is still its
// mark): then the bucket is as if it had never been taken, tat one
// interval earlier, but never before now, since a bucket holds at most
// burst tokens. If a token was taken after it, that taker holds the
// instant after this one, and moving tat back would hand the same instant
// to the next taker: two requests where the bucket allows one. Then the
// token is lost, as x/time/rate's Reservation.Cancel gives back only the
// tokens nobody reserved after.
func (g gcra) giveBack(tat, mark, now time.Duration) time.Duration {
	if tat != mark || tat == math.MaxInt64 {
		return tat // taken after, or saturated: a limit that never refills stays so
	}
	return max(tat-g.interval, now)
}

// full reports whether the bucket whose state is tat is full at now, the
// same as a bucket never used.
func (g gcra) full(tat, now time.Duration) bool { return tat <= now }
