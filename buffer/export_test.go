package buffer

// SlotsFree returns the number of b's queue slots free now, closed or not:
// a test's way to see that a slot came back after the Buffer failed.
func SlotsFree[Req, Res any](b *Buffer[Req, Res]) int { return b.slots.Available() }

// ReadyNowOnCaller is the Where of the PanicError a Buffer fails with when
// the inner service's Ready panics.
const ReadyNowOnCaller = readyNowOnCaller
