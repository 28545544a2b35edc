package buffer

import (
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// A request queued after the worker has exited, which a caller that passed
// the closed check just before Close can do, is never counted as Queued:
// no worker would count it out. Forcing that interleaving from outside
// takes a scheduler; here queuedIn is called as such a caller would.
func TestQueuedAfterWorkerExitIsNotCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		b := New[string, string](m, 1, WithMetrics(&c))
		b.c.queuedIn()
		if got := c.Get(metrics.Queued); got != 1 {
			t.Fatalf("before Close: got Queued %d, want 1", got)
		}
		b.Close() // the worker counts out the request it never took
		if got := c.Get(metrics.Queued); got != 0 {
			t.Fatalf("after Close: got Queued %d, want 0", got)
		}
		b.c.queuedIn()
		if got := c.Get(metrics.Queued); got != 0 {
			t.Errorf("queued after the worker exited: got Queued %d, want 0", got)
		}
	})
}
