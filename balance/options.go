package balance

import (
	"errors"
	"log/slog"
	"math/rand/v2"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// ErrNoEndpoints is the error of a request sent through a balancer built
// with [WithFailFast] while it has no endpoints at all. Its method
// Unavailable answers true (see [tower.IsUnavailable]).
var ErrNoEndpoints error = unavailable{errors.New("load balancer has no endpoints")}

// ErrClosed is the error of Ready on a closed balancer. Its method
// Unavailable answers true (see [tower.IsUnavailable]).
var ErrClosed error = unavailable{errors.New("load balancer closed")}

// unavailable is the type of the balancer's sentinel errors, for
// tower.IsUnavailable. Each wraps an error of its own, so two sentinels
// are never equal.
type unavailable struct{ error }

func (unavailable) Unavailable() bool { return true }

// A DiscoverError reports an error of the balancer's Discover, or a panic
// in its Next on the balancer's goroutine (Err is then a
// *tower.PanicError).
type DiscoverError struct {
	Err error
}

// Error returns tower's message: "load balancer discovery error: " and
// the Discover's.
func (e *DiscoverError) Error() string { return "load balancer discovery error: " + e.Err.Error() }

// Unwrap returns the Discover's error.
func (e *DiscoverError) Unwrap() error { return e.Err }

// A Rand is the random source of a [P2C]: IntN returns a number in [0, n),
// as *rand.Rand's of math/rand/v2 does.
type Rand interface {
	IntN(n int) int
}

type globalRand struct{}

func (globalRand) IntN(n int) int { return rand.IntN(n) }

// An Option configures a balancer.
type Option func(*options)

type options struct {
	rand     Rand
	failFast bool
	onError  func(error)
	onRemove any // a func(K, S), checked by the constructor
	log      *slog.Logger
	sink     metrics.Sink
	outlier  *outlierConfig // WithOutlierDetection's; nil: none
}

// WithRand makes a P2C draw its endpoints with r instead of math/rand/v2's
// global source: give a seeded one for results that repeat. r is called
// with the balancer's lock held, so it need not be safe for concurrent use,
// but must not be shared. RoundRobin ignores it. It panics if r is nil or
// holds a nil pointer.
func WithRand(r Rand) Option {
	option.PanicIf(isnil.Is(r), "balance.WithRand: nil Rand")
	return func(o *options) { o.rand = r }
}

// WithFailFast makes a balancer with no endpoints at all (none ready, none
// pending) fail requests at once with ErrNoEndpoints, instead of making
// them wait, once its Discover has answered (a change, an error or its
// end). Ready succeeds and the permit's Call fails, since an error from
// Ready would mean the balancer is broken for good.
func WithFailFast() Option {
	return func(o *options) { o.failFast = true }
}

// WithErrorHandler makes the balancer call f with what it handles on its
// own: a *readycache.Failed for each endpoint dropped because its Ready
// failed or panicked, a *[DiscoverError], and an *[Ejection] for each
// endpoint outlier detection ejects. By default these are dropped. f is
// called without any lock, from the balancer's goroutines and from callers
// of Ready, so it must be safe for concurrent use.
func WithErrorHandler(f func(error)) Option {
	option.PanicIf(f == nil, "balance.WithErrorHandler: nil handler")
	return func(o *options) { o.onError = f }
}

// WithRemovalHandler makes the balancer call f with each endpoint that
// leaves its set: removed by the Discover, replaced under its key, dropped
// because its Ready failed, or by Close. By then the balancer has released
// the endpoint's reservation and no goroutine of its own uses it, so f may
// close it; permits taken from it before are their callers' and may still
// be in use. f is called without any lock, from the balancer's goroutines
// and from callers of Ready and Close, so it must be safe for concurrent
// use.
//
// K and S must be the balancer's key and endpoint types (load.Service[Req,
// Res] for a P2C, tower.Service[Req, Res] for a RoundRobin): the
// constructor panics if they are not. It panics if f is nil.
func WithRemovalHandler[K comparable, S any](f func(key K, svc S)) Option {
	option.PanicIf(f == nil, "balance.WithRemovalHandler: nil handler")
	return func(o *options) { o.onRemove = f }
}

// WithMetrics makes the balancer report to sink [metrics.Ejected]: +1 when
// outlier detection ejects an endpoint, -1 when the endpoint comes back or
// leaves the set while ejected. The sink is called without the balancer's
// locks, on the goroutine where that happens. By default nothing is
// reported. It panics if sink is nil or holds a nil pointer.
func WithMetrics(sink metrics.Sink) Option {
	option.PanicIf(isnil.Is(sink), "balance.WithMetrics: nil sink")
	return func(o *options) { o.sink = sink }
}
