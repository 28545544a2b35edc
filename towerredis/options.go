package towerredis

import (
	"fmt"
	"time"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// FailMode says what a limit does when Redis does not answer a round trip
// within the timeout ([WithTimeout]), or answers with an error. While Redis
// is away each request may wait up to one timeout before its FailMode
// applies, as go-redis retries within the round trip's deadline; a client
// with MaxRetries -1 fails at once after PoolSize refused dials in a row.
type FailMode uint8

const (
	// FailOpen, the default, admits the request as though Redis had
	// granted it: the fleet runs unlimited while Redis is away, and each
	// replica's local limits still hold.
	FailOpen FailMode = iota + 1
	// FailClosed refuses the request at once, without calling the inner
	// service, with an [*UnreachableError]: a [Bucket]'s or a
	// [Concurrency]'s Ready returns a permit whose Call fails with it (an
	// error from Ready would mean the limit is broken for good); a
	// [Keyed]'s Call returns it.
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
	// Err is nil when Redis answered as expected; otherwise
	// context.DeadlineExceeded, the client's error, an [ErrBadReply], or,
	// for "lease.renew" and "lease.release", an [ErrLeaseLost].
	Err error
}

// An Option configures any limit of this package: it is a [BucketOption],
// a [KeyedOption] and a [ConcurrencyOption]. An option for one kind of
// limit only ([WithBatch], [WithMaxWait], [WithPollInterval]) has that
// kind's type, so that giving it to another does not compile.
type Option func(*options)

func (o Option) applyBucket(x *options)      { o(x) }
func (o Option) applyKeyed(x *options)       { o(x) }
func (o Option) applyConcurrency(x *options) { o(x) }

// A BucketOption configures a [Bucket]: an [Option], or [WithBatch].
type BucketOption interface{ applyBucket(*options) }

// A KeyedOption configures a [Keyed]: an [Option], or [WithMaxWait].
type KeyedOption interface{ applyKeyed(*options) }

// A ConcurrencyOption configures a [Concurrency]: an [Option], or
// [WithPollInterval].
type ConcurrencyOption interface{ applyConcurrency(*options) }

type (
	bucketOption      func(*options)
	keyedOption       func(*options)
	concurrencyOption func(*options)
)

func (o bucketOption) applyBucket(x *options)           { o(x) }
func (o keyedOption) applyKeyed(x *options)             { o(x) }
func (o concurrencyOption) applyConcurrency(x *options) { o(x) }

type options struct {
	timeout  time.Duration
	fail     FailMode
	prefix   string
	sink     metrics.Sink
	observer func(RoundTrip)

	batch   int           // Bucket only
	maxWait time.Duration // Keyed only
	poll    time.Duration // Concurrency only
}

const (
	// DefaultTimeout bounds each round trip to Redis.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultPrefix begins every key the limits write.
	DefaultPrefix = "tower"
	// DefaultPollInterval is how often a caller waiting for a lease asks
	// Redis again.
	DefaultPollInterval = 10 * time.Millisecond
)

// WithTimeout bounds each round trip to Redis by d instead of
// DefaultTimeout. It panics if d is not positive.
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

// WithPrefix begins every key the limit writes with prefix instead of
// DefaultPrefix. It panics if prefix is empty.
func WithPrefix(prefix string) Option {
	if prefix == "" {
		panic("towerredis.WithPrefix: prefix is empty")
	}
	return func(o *options) { o.prefix = prefix }
}

// WithMetrics makes the limit report to sink: Waiting, for callers
// waiting in a [Bucket]'s or a [Concurrency]'s Ready or in a [Keyed]'s
// Call; for a Concurrency, InFlight, for the requests it admitted that
// have not ended (holding a lease, or without one under FailOpen); for a
// Keyed, Throttled, for each request it refused because its key had no
// token. A nil sink is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithObserver calls observe, which must be cheap and not block, after
// each round trip to Redis, on the goroutine that made it. It panics if
// observe is nil.
func WithObserver(observe func(RoundTrip)) Option {
	if observe == nil {
		panic("towerredis.WithObserver: observe is nil")
	}
	return func(o *options) { o.observer = observe }
}

// newOptions applies opts and fills in the defaults. It panics, naming fn,
// if an option is nil.
func newOptions[O any](fn string, opts []O, apply func(O, *options)) options {
	var o options
	for i, opt := range opts {
		if guard.IsNil(opt) {
			panic(fmt.Sprintf("%s: option %d is nil", fn, i))
		}
		apply(opt, &o)
	}
	if o.timeout == 0 {
		o.timeout = DefaultTimeout
	}
	if o.fail == 0 {
		o.fail = FailOpen
	}
	if o.prefix == "" {
		o.prefix = DefaultPrefix
	}
	return o
}

func bucketOptions(fn string, opts []BucketOption) options {
	return newOptions(fn, opts, BucketOption.applyBucket)
}

func keyedOptions(fn string, opts []KeyedOption) options {
	return newOptions(fn, opts, KeyedOption.applyKeyed)
}

func concurrencyOptions(fn string, opts []ConcurrencyOption) options {
	o := newOptions(fn, opts, ConcurrencyOption.applyConcurrency)
	if o.poll == 0 {
		o.poll = DefaultPollInterval
	}
	return o
}
