package towerredis

import (
	"errors"
	"fmt"
	"time"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/option"
)

// FailMode says what a limit does when Redis does not answer a round trip
// within the timeout, or answers with an error.
type FailMode uint8

const (
	// FailOpen admits the request as though Redis had granted it: the
	// fleet runs unlimited while Redis is away, and each replica's local
	// limits still hold. It is the default, as in Envoy's rate-limit
	// filter: a limit's store going down should not take the service
	// down with it.
	FailOpen FailMode = iota + 1
	// FailClosed treats the limit as not ready: Ready asks Redis again
	// after the retry interval, until Redis answers or ctx ends, and a
	// done ctx (a LoadShed's probe) gets its answer after one round trip.
	// Use it where going over the limit costs more than refusing, as in
	// front of a paid or fragile backend.
	FailClosed
)

func (m FailMode) String() string {
	switch m {
	case FailOpen:
		return "FailOpen"
	case FailClosed:
		return "FailClosed"
	}
	return fmt.Sprintf("FailMode(%d)", uint8(m))
}

// A RoundTrip is one call of a limit to Redis, as the observer of
// [WithObserver] sees it.
type RoundTrip struct {
	// Op names what the limit asked: "rate", "lease.acquire",
	// "lease.release" or "lease.renew".
	Op string
	// Latency is from the call to its answer, or to its timeout.
	Latency time.Duration
	// Err is nil when Redis answered as expected; otherwise the error:
	// context.DeadlineExceeded for a round trip that timed out, the
	// client's error, an [ErrBadReply], or an [ErrLeaseLost] (ops
	// "lease.renew" and "lease.release": a lease was gone when renewed or
	// given back; its call went on).
	Err error
}

// ErrBadReply is wrapped by the error of a round trip whose answer was not
// of the form the limit's script returns: a Redis that answers garbage, or
// a key of another type. Such an answer never grants anything, whatever
// the [FailMode].
var ErrBadReply = errors.New("towerredis: unexpected reply from Redis")

// An Option configures a limit of this package.
type Option func(*options)

type options struct {
	timeout  time.Duration
	retry    time.Duration
	fail     FailMode
	prefix   string
	sink     metrics.Sink
	observer func(RoundTrip)

	batch   int           // rate: tokens taken per round trip
	maxWait time.Duration // per-key rate: how long a Call waits for its key's token
	poll    time.Duration // lease: how often a waiter asks again
}

// Defaults.
const (
	// DefaultTimeout bounds each round trip to Redis.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultRetryInterval is how long a FailClosed limit waits before it
	// asks an unreachable Redis again.
	DefaultRetryInterval = 100 * time.Millisecond
	// DefaultPrefix begins every key the limits write.
	DefaultPrefix = "tower"
	// DefaultPollInterval is how often a caller waiting for a lease asks
	// Redis again.
	DefaultPollInterval = 10 * time.Millisecond
)

// WithTimeout bounds each round trip to Redis by d, instead of
// DefaultTimeout: a round trip that has no answer by then counts as Redis
// being unreachable, and the [FailMode] decides. It panics if d is not
// positive.
func WithTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("towerredis.WithTimeout: timeout must be positive, got %v", d))
	}
	return func(o *options) { o.timeout = d }
}

// WithFailMode sets what the limit does when Redis is unreachable; the
// default is FailOpen. It panics if m is not FailOpen or FailClosed.
func WithFailMode(m FailMode) Option {
	if m != FailOpen && m != FailClosed {
		panic(fmt.Sprintf("towerredis.WithFailMode: unknown mode %v", m))
	}
	return func(o *options) { o.fail = m }
}

// WithRetryInterval sets how long a FailClosed limit waits before it asks
// an unreachable Redis again, instead of DefaultRetryInterval. It panics
// if d is not positive.
func WithRetryInterval(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("towerredis.WithRetryInterval: interval must be positive, got %v", d))
	}
	return func(o *options) { o.retry = d }
}

// WithPrefix begins every key the limit writes with prefix instead of
// DefaultPrefix, to keep apart the limits of applications that share a
// Redis. It panics if prefix is empty.
func WithPrefix(prefix string) Option {
	if prefix == "" {
		panic("towerredis.WithPrefix: prefix is empty")
	}
	return func(o *options) { o.prefix = prefix }
}

// WithMetrics makes the limit report to sink: Waiting, for callers waiting
// in Ready, and, for a concurrency limit, InFlight, for the requests it
// admitted that have not ended (holding a lease, or without one under
// FailOpen). A per-key rate limit also counts Throttled, for each request
// it refused. A nil sink is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithObserver calls observe after each round trip to Redis, on the
// goroutine that made it, with its latency and error: the hook for Redis's
// errors and latency in a monitoring system. It must be cheap and must not
// block.
func WithObserver(observe func(RoundTrip)) Option {
	if observe == nil {
		panic("towerredis.WithObserver: observe is nil")
	}
	return func(o *options) { o.observer = observe }
}

// newOptions applies opts for the function named fn, with the defaults.
func newOptions(fn string, opts []Option) options {
	var o options
	option.Onto(fn, &o, opts)
	if o.timeout == 0 {
		o.timeout = DefaultTimeout
	}
	if o.retry == 0 {
		o.retry = DefaultRetryInterval
	}
	if o.fail == 0 {
		o.fail = FailOpen
	}
	if o.prefix == "" {
		o.prefix = DefaultPrefix
	}
	return o
}
