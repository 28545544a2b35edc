package timeout

import (
	"fmt"
	"time"

	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// Mode says what a Timeout does when the inner call has not returned at
// the deadline.
type Mode int

const (
	// Cooperative, the default, runs the inner call on the caller's
	// goroutine, cancels its context at the deadline, and answers
	// ErrElapsed once the call returns, after what the call held below the
	// Timeout is given back: against an inner call that ignores its
	// context and takes 300ms, a Timeout of 100ms answers at 300ms. It
	// starts no goroutine. A response at the very instant of the deadline
	// wins, as in tower. A panic in the inner call goes on up to the
	// caller.
	Cooperative Mode = iota
	// Abandon answers the caller at the deadline, or at once when the
	// caller cancels, whatever the inner call does, as net/http's
	// TimeoutHandler does. The call runs on a goroutine of its own, keeps
	// what it reserved below the Timeout until it returns, and its late
	// response is discarded; so put an Abandon Timeout above the limits,
	// which then count what really runs. A response at the very instant of
	// the deadline counts as late. A panic or runtime.Goexit in the inner
	// call reaches a caller still waiting as a [*tower.PanicError], and is
	// otherwise logged to log/slog's default logger at level Error.
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
	sink metrics.Sink // nil: no metrics
}

// WithMode sets the Mode. The default is Cooperative. It panics if m is
// neither Cooperative nor Abandon.
func WithMode(m Mode) Option {
	option.PanicIf(m != Cooperative && m != Abandon, "timeout.WithMode: unknown mode %v", m)
	return func(o *options) { o.mode = m }
}

// WithMetrics makes the Timeout report to sink: TimedOut +1 for each call
// it ends with ErrElapsed because its own duration passed, not for the
// caller's deadline or cancellation, nor for an ErrElapsed from a Timeout
// further in. The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions validates the arguments of fn and applies opts.
func newOptions(fn string, d time.Duration, opts []Option) options {
	option.PanicIf(d <= 0, "%s: duration d must be positive, got %v", fn, d)
	return option.Apply[options](fn, opts)
}
