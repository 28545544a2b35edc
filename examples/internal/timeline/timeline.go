// Package timeline holds what the example programs that print a timeline
// share: running a program in real time with its callers arriving in a fixed
// order, and printing its times so that a run in real time prints the same
// lines as its test on a virtual clock.
package timeline

import (
	"context"
	"runtime"
	"time"
)

// RealTime sets the process up to run a program in real time on one thread,
// where a caller that has just been started runs until it blocks before the
// next caller is started, so that callers arrive in the order they were
// started. It returns the function to call after starting each caller. (A
// test runs the same program under testing/synctest and passes
// synctest.Wait instead.)
func RealTime() (settle func()) {
	runtime.GOMAXPROCS(1)
	return runtime.Gosched
}

// Since returns the time since start in milliseconds, rounded to the nearest
// 10ms, so that scheduling noise does not show in real time.
func Since(start time.Time) int64 {
	return time.Since(start).Round(10 * time.Millisecond).Milliseconds()
}

// Work stands for a request that takes d to serve: it returns nil after d,
// or ctx's error as soon as ctx ends, as well-behaved Go code does.
func Work(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
