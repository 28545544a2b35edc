package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/towergo/tower"
)

// The failsafe-go limiter's configuration: its documentation's own
// ("Basic Usage" at failsafe-go.dev/adaptive-limiter): limits 1 to 100
// from 20, a recent window of 1s to 30s and at least 50 samples, a
// baseline window of 10, and queueing with rejection factors 2 and 3.
const (
	fsMinLimit, fsMaxLimit, fsInitialLimit = 1, 100, 20
	fsRecentMin, fsRecentMax               = time.Second, 30 * time.Second
	fsRecentSamples                        = 50
	fsBaselineAge                          = 10
	fsInitialRejection, fsMaxRejection     = 2.0, 3.0
)

// fsOverloaded is the error of a request the failsafe-go limiter rejects:
// adaptivelimiter.ErrExceeded, which answers Overloaded as
// loadshed.ErrOverloaded does, so that it counts as shed.
type fsOverloaded struct{}

func (fsOverloaded) Error() string    { return adaptivelimiter.ErrExceeded.Error() }
func (fsOverloaded) Overloaded() bool { return true }
func (fsOverloaded) Unwrap() error    { return adaptivelimiter.ErrExceeded }

// failsafeLimit is failsafe-go's adaptive limiter in front of inner, as a
// tower.Service. failsafe-go has no readiness phase: Ready acquires the
// limiter's permit, waiting in its queue, and the permit's Call runs the
// request and records its time (Record), or drops it (Drop) if it failed,
// as the limiter's documentation says to do for an execution that ends
// early, such as by a timeout.
//
// The queueing is the library's WithQueueing(2, 3), redone here with a
// seeded random source: when the limiter is full, a request is admitted
// to wait unless the queue already holds twice the limit, then rejected
// with a probability rising from 0 at twice the limit to 1 at three times
// it. The library draws that probability from math/rand/v2's global
// source, which no program can seed, and the test checks the figures
// exactly. The limiter itself is the library's, built without queueing:
// WithQueueing changes nothing but that admission.
type failsafeLimit struct {
	lim   adaptivelimiter.AdaptiveLimiter[any]
	inner tower.Service[int, struct{}]

	queueing bool // WithQueueing(2, 3); without, a request that finds the limiter full is rejected
	mu       sync.Mutex
	rng      *rand.Rand
	callers  atomic.Uint64 // callers of Ready so far, for untie
}

// newFailsafeLimit returns the limiter in front of inner, with or without
// its documentation's queueing.
func newFailsafeLimit(inner tower.Service[int, struct{}], queueing bool) *failsafeLimit {
	lim := adaptivelimiter.NewBuilder[any]().
		WithLimits(fsMinLimit, fsMaxLimit, fsInitialLimit).
		WithRecentWindow(fsRecentMin, fsRecentMax, fsRecentSamples).
		WithBaselineWindow(fsBaselineAge).
		Build()
	return &failsafeLimit{lim: lim, inner: inner, queueing: queueing, rng: rand.New(rand.NewPCG(seed, 1))}
}

// admit is the queueing limiter's CanAcquirePermit, with f's own source.
func (f *failsafeLimit) admit() bool {
	if f.lim.CanAcquirePermit() {
		return true
	}
	if !f.queueing {
		return false
	}
	limit, queued := f.lim.Limit(), f.lim.Queued()
	threshold, most := int(float64(limit)*fsInitialRejection), int(float64(limit)*fsMaxRejection)
	if queued < threshold {
		return true
	}
	if queued >= most {
		return false
	}
	rejection := float64(queued-threshold) / float64(most-threshold)
	f.mu.Lock()
	defer f.mu.Unlock()
	return rejection < f.rng.Float64()
}

// Ready waits for the limiter's permit, or returns one that fails with
// fsOverloaded if the limiter rejects the request. A caller that waited
// goes on as untie says.
func (f *failsafeLimit) Ready(ctx context.Context) (tower.Permit[int, struct{}], error) {
	n := f.callers.Add(1)
	if !f.admit() {
		return tower.NewPermit[int, struct{}](rejected{}, 0), nil
	}
	fp, ok := f.lim.TryAcquirePermit()
	if !ok {
		var err error
		if fp, err = f.lim.AcquirePermit(ctx); err != nil {
			return tower.Permit[int, struct{}]{}, err
		}
		untie(n)
	}
	p, err := f.inner.Ready(ctx)
	if err != nil {
		fp.Drop()
		return p, err
	}
	return tower.NewPermit[int, struct{}](&fsPermit{fp: fp, p: p}, 0), nil
}

// Limit is the limiter's current limit.
func (f *failsafeLimit) Limit() int { return f.lim.Limit() }

// fsPermit holds the limiter's permit and the inner service's.
type fsPermit struct {
	used atomic.Bool
	fp   adaptivelimiter.Permit
	p    tower.Permit[int, struct{}]
}

func (r *fsPermit) CallReserved(ctx context.Context, _ uint64, req int) (struct{}, error) {
	if r.used.Swap(true) {
		panic("tower: Call on a used failsafe permit")
	}
	res, err := r.p.Call(ctx, req)
	if err != nil {
		r.fp.Drop()
	} else {
		r.fp.Record()
	}
	return res, err
}

func (r *fsPermit) ReleaseReserved(uint64) {
	if !r.used.Swap(true) {
		r.p.Release()
		r.fp.Drop()
	}
}

// rejected serves the permits of requests the limiter rejects.
type rejected struct{}

func (rejected) CallReserved(context.Context, uint64, int) (struct{}, error) {
	return struct{}{}, fsOverloaded{}
}

func (rejected) ReleaseReserved(uint64) {}
