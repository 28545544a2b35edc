package buffer

import (
	"context"

	"github.com/towergo/tower/metrics"
)

// acquireSlot waits in line for a slot of the queue, counted as Waiting by
// the Buffer's sink, if it has one, while it waits.
func (b *Buffer[Req, Res]) acquireSlot(ctx context.Context) error {
	if b.sink == nil {
		return b.slots.Acquire(ctx)
	}
	return b.slots.AcquireWatched(ctx, (*slotWaiters[Req, Res])(b))
}

// slotWaiters tells the Buffer's sink of the callers waiting for a slot. It
// is the Buffer itself, kept off its method set, so that it goes in the
// semaphore's Watcher without an allocation.
type slotWaiters[Req, Res any] Buffer[Req, Res]

func (w *slotWaiters[Req, Res]) Waiting(delta int64) { w.sink.Add(metrics.Waiting, delta) }
