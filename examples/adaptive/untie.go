package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
)

// untie sleeps 1 to 4096 nanoseconds, the n-th caller's own number of
// them, for a caller that has just been let out of a limiter's queue. A
// limiter may let several waiters go at one instant (one that raises its
// limit as a permit comes back lets out two), and on synctest's clock
// they would then reach the server at that instant, in whatever order
// their goroutines run; a few nanoseconds apart, they reach it in the
// order they came to the limiter, and the run is the same every time.
func untie(n uint64) { time.Sleep(time.Duration(n%4096) + 1) }

// untied is a limiter whose callers may wait in its Ready, a caller that
// waited going on as untie says.
type untied struct {
	inner   tower.Service[int, struct{}]
	callers atomic.Uint64
}

func (u *untied) Ready(ctx context.Context) (tower.Permit[int, struct{}], error) {
	n := u.callers.Add(1)
	if p, ok, err := tower.ReadyNowFor(ctx, u.inner); ok || err != nil {
		return p, err
	}
	p, err := u.inner.Ready(ctx)
	if err == nil {
		untie(n)
	}
	return p, err
}
