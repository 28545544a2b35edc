package buffer

// SlotsFree returns the number of b's queue slots free now, closed or not:
// a test's way to see that a slot came back after the Buffer failed.
func SlotsFree[Req, Res any](b *Buffer[Req, Res]) int { return b.c.slots.Available() }

// RingSize returns the size of the ring b's queue holds its messages in.
func RingSize[Req, Res any](b *Buffer[Req, Res]) int { return b.c.q.capacity() }

// MinRing is the size the ring starts at and shrinks back to.
const MinRing = minRing

// Where a panic happened, as the PanicError a Buffer fails with says.
const (
	ReadyOnWorker    = readyOnWorker
	ReleaseOnWorker  = releaseOnWorker
	SinkOnWorker     = sinkOnWorker
	ReadyNowOnCaller = readyNowOnCaller
)
