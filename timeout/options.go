package timeout

import (
	"fmt"
	"time"

	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// Mode says what a Timeout does when the inner call has not returned at the
// deadline. The package doc compares the two.
type Mode int

const (
	// Cooperative, the default, runs the inner call on the caller's
	// goroutine, cancels its context at the deadline, and answers the
	// caller with ErrElapsed once the call returns. It starts no goroutine,
	// and nothing the request started outlives it: whatever the call holds
	// (a concurrency permit below the Timeout, a connection) is given back
	// before the caller hears. An inner call that ignores its context keeps
	// the caller waiting as long as it takes, and its late response is
	// still replaced by ErrElapsed. A response at the very instant of the
	// deadline wins, as in tower. A panic in the inner call goes on up to
	// the caller, on whose goroutine it happens, once what the call held
	// below the Timeout is given back.
	Cooperative Mode = iota
	// Abandon answers the caller at the deadline whatever the inner call
	// does, as net/http's TimeoutHandler does. The inner call runs on a
	// goroutine of its own, one per request; its context is cancelled at
	// the deadline, and it keeps what it holds, everything reserved below
	// the Timeout, until it returns; its late response is discarded. The
	// response must come before the deadline: one at its very instant
	// races the timer from another goroutine, so it is counted as late. A
	// caller that cancels its context before the deadline is answered
	// context.Canceled at once, and the inner call goes on without it, as
	// at the deadline.
	//
	// Place an Abandon Timeout above the limits, Timeout > ConcurrencyLimit:
	// there the limit's permit is held until the abandoned call returns,
	// and the limit bounds what really runs. Under ConcurrencyLimit >
	// Timeout the permit comes back at the deadline while the abandoned
	// call runs on, and calls that ignore their context escape the limit.
	//
	// A panic in the inner call, or a runtime.Goexit, does not end the
	// program: the caller, if it still waits, gets it as a
	// [*tower.PanicError] error, whose Where is "the inner service's Call,
	// on the goroutine of a Timeout's Abandon mode"; one that comes after
	// the caller was answered is logged to log/slog's default logger, at
	// level Error, with its stack.
	Abandon
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Cooperative:
		return "Cooperative"
	case Abandon:
		return "Abandon"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// An Option configures a Timeout.
type Option func(*options)

type options struct {
	mode Mode
	sink metrics.Sink
}

// WithMode sets the Mode. The default is Cooperative. It panics if m is
// neither Cooperative nor Abandon.
func WithMode(m Mode) Option {
	if m != Cooperative && m != Abandon {
		panic(fmt.Sprintf("timeout.WithMode: unknown mode %v", m))
	}
	return func(o *options) { o.mode = m }
}

// WithMetrics makes the Timeout report to sink: TimedOut +1 for each call
// it ends with ErrElapsed because its own duration passed. A call that
// ends with the caller's deadline or cancellation, or with an ErrElapsed
// that came from a Timeout further in, is not counted. The default, and a
// nil sink, is no metrics: then the only cost is a nil check on the path of
// a call that timed out.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions validates the arguments of the function named fn and applies
// opts.
func newOptions(fn string, d time.Duration, opts []Option) options {
	if d <= 0 {
		panic(fmt.Sprintf("%s: duration d must be positive, got %v", fn, d))
	}
	return option.Apply[options](fn, opts)
}
