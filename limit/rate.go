package limit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/internal/waitq"
	"github.com/towergo/tower/metrics"
)

// Rate is middleware that lets at most num requests through per period
// with tower's fixed window (tower's RateLimit). The first Ready after a
// window ended opens a window of length per with num places, and each
// Ready takes a place. When the window is full, Ready waits, first come
// first served, until it ends; if anyone waits then, the next window opens
// at that instant and its places go to the oldest waiters. The bound holds
// per window: across a window's end up to twice num go through at once (a
// [Bucket] avoids that).
//
// Ready takes its place before it asks the inner service, and gives it
// back if that fails or ctx ends meanwhile. A place released unused goes
// back to its window if that window is still open, and is lost otherwise.
//
// A Rate is safe for concurrent use; unlike tower's RateLimit, which
// cannot be cloned, one Rate is one rate shared by all its callers. Ready
// allocates nothing when a place is free. A machine so busy that a timer
// fires late makes a window last longer, never shorter. Build one with
// [NewRate].
type Rate[Req, Res any] struct {
	units units[Req, Res]
	num   int
	per   time.Duration
	sink  metrics.Sink // nil: no metrics

	// The current window, and its places left tagged with its number, so
	// that a lock-free Ready takes a place only from the window it saw.
	cur    atomic.Pointer[window]
	places atomic.Uint64 // tag(window) | nearEnd | places left

	line  waitq.Line    // waiters, granted a window; its lock opens windows
	timer *time.Timer   // runs tick: see schedule
	alarm time.Duration // the instant timer is set for; 0: not set
}

// A window is immutable once published.
type window struct {
	n     uint64        // counts windows opened; a place belongs to one
	until time.Duration // its end
}

// Rate.places holds the places left in its low 40 bits, then the nearEnd
// bit, then the window's number, which wraps, in the high 23.
const (
	placeBits = 40
	placeMask = 1<<placeBits - 1
	nearEnd   = 1 << placeBits
	tagShift  = placeBits + 1
	tagBits   = ^uint64(nearEnd | placeMask)
	// MaxRate is the largest number of requests a Rate lets through per
	// period.
	MaxRate = placeMask
)

func tag(n uint64) uint64 { return n << tagShift }

// margin is how long before a window's end a Ready starts to read the
// clock to tell whether the window is still open. Until then a timer
// vouches for it, so that a Ready takes a place with no clock read.
func (r *Rate[Req, Res]) margin() time.Duration { return min(r.per/8, 4*time.Millisecond) }

// NewRate returns inner wrapped in a [Rate] of num requests per period; a
// per too long for the clock is a window that never ends. It panics if
// inner is nil (a typed nil too), num is below 1 or above MaxRate, per is
// not positive, or an option is nil.
func NewRate[Req, Res any](inner tower.Service[Req, Res], num int, per time.Duration, opts ...Option) *Rate[Req, Res] {
	option.PanicIf(isnil.Is(inner), "limit.NewRate: inner is nil")
	validateRate("limit.NewRate", num, per)
	o := newOptions("limit.NewRate", opts)
	r := &Rate[Req, Res]{num: num, per: per, sink: o.sink}
	r.units.inner, r.units.giveBack = inner, r.giveBack
	return r
}

// NewRateLayer returns a Layer that wraps each service in a [Rate] of its
// own, with num, per and opts. It panics as [NewRate] does.
func NewRateLayer[Req, Res any](num int, per time.Duration, opts ...Option) tower.Layer[Req, Res] {
	validateRate("limit.NewRateLayer", num, per)
	newOptions("limit.NewRateLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewRate(inner, num, per, opts...)
	})
}

func validateRate(fn string, num int, per time.Duration) {
	option.PanicIf(num < 1 || num > MaxRate, "%s: num must be between 1 and %d, got %d", fn, MaxRate, num)
	option.PanicIf(per <= 0, "%s: per must be positive, got %v", fn, per)
}

// Ready takes a place in the current window, waiting for the next window
// if this one is full, then waits for the inner service. If ctx ends while
// Ready waits for a window, it returns ctx.Err() and holds no place.
func (r *Rate[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	window, err := r.reserve(ctx)
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	held := true
	defer func() {
		if held {
			r.giveBack(window)
		}
	}()
	inner, err := r.units.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	return r.units.wraps.WrapNoted(&r.units, inner, window), nil
}

// reserve takes a place and returns its window's number.
func (r *Rate[Req, Res]) reserve(ctx context.Context) (uint64, error) {
	if r.line.Len() == 0 {
		if n, ok := r.takeEarly(); ok {
			return n, nil
		}
		if w := r.cur.Load(); w != nil && mono.Now() < w.until && r.takePlace(w.n) {
			return w.n, nil
		}
	}
	return r.reserveSlow(ctx)
}

// takeEarly is reserve while the window is not near its end.
func (r *Rate[Req, Res]) takeEarly() (uint64, bool) {
	for s := r.places.Load(); s&nearEnd == 0 && s&placeMask > 0; s = r.places.Load() {
		if r.places.CompareAndSwap(s, s-1) {
			return s >> tagShift, true
		}
	}
	return 0, false
}

// takePlace takes a place in window n, if it is still the current one.
func (r *Rate[Req, Res]) takePlace(n uint64) bool {
	for s := r.places.Load(); s&tagBits == tag(n) && s&placeMask > 0; s = r.places.Load() {
		if r.places.CompareAndSwap(s, s-1) {
			return true
		}
	}
	return false
}

// reserveSlow takes a place under the lock, or waits in line for one.
func (r *Rate[Req, Res]) reserveSlow(ctx context.Context) (uint64, error) {
	r.line.Lock()
	now := mono.Now()
	if r.line.Len() == 0 {
		w := r.roll(now)
		if r.takePlace(w.n) {
			r.line.Unlock()
			return w.n, nil
		}
	}
	if err := ctx.Err(); err != nil {
		r.line.Unlock()
		return 0, err
	}
	w := r.line.Join()
	r.schedule(now)
	r.line.Unlock()
	return r.line.Wait(ctx, w, r.sink, r.giveBack)
}

// roll opens a new window if the current one has ended, and returns the
// current window. r.line must be locked.
func (r *Rate[Req, Res]) roll(now time.Duration) *window {
	w := r.cur.Load()
	if w != nil && now < w.until {
		return w
	}
	n := uint64(1)
	if w != nil {
		n = (w.n + 1) & (tagBits >> tagShift)
	}
	w = &window{n: n, until: mono.Add(now, r.per)}
	// Published before its places, so that a taker that sees the places
	// tagged with n finds window n current.
	r.cur.Store(w)
	places := tag(n) | uint64(r.num)
	if r.margin() == 0 {
		places |= nearEnd // too short a window to time its bulk
	}
	r.places.Store(places)
	r.schedule(now)
	return w
}

// schedule sets the timer for what comes next, if anything: the instant
// the current window comes near its end, then, if anyone waits, its end.
// r.line must be locked.
func (r *Rate[Req, Res]) schedule(now time.Duration) {
	w := r.cur.Load()
	var at time.Duration
	switch {
	case r.places.Load()&nearEnd == 0:
		at = w.until - r.margin()
	case r.line.Len() > 0:
		at = w.until
	default:
		return
	}
	if at == r.alarm {
		return
	}
	r.alarm = at
	if r.timer == nil {
		r.timer = time.AfterFunc(at-now, r.tick)
	} else {
		r.timer.Reset(at - now)
	}
}

// tick runs on the timer: see schedule. A timer that fires as it is reset
// does what the state calls for.
func (r *Rate[Req, Res]) tick() {
	r.line.Lock()
	defer r.line.Unlock()
	r.alarm = 0
	now := mono.Now()
	w := r.cur.Load()
	r.places.Or(nearEnd)
	if now >= w.until && r.line.Len() > 0 {
		w = r.roll(now)
		for r.line.Len() > 0 && r.takePlace(w.n) {
			r.line.Serve(w.n)
		}
	}
	r.schedule(now)
}

// giveBack returns an unused place to window n, if that window is still
// the current one: to the oldest waiter, or to the window's count.
func (r *Rate[Req, Res]) giveBack(n uint64) {
	r.line.Lock()
	defer r.line.Unlock()
	w := r.cur.Load()
	if w == nil || w.n != n || mono.Now() >= w.until {
		return
	}
	if !r.line.Serve(n) {
		r.places.Add(1) // the tag is n's: only this lock opens windows
	}
}
