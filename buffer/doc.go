// Package buffer puts a bounded queue in front of a service: tower's
// Buffer. Use [New] for one service, or [NewLayer] in a stack, keeping the
// [Layer] to close the Buffers it makes:
//
//	buf := buffer.NewLayer[string, string](8)
//	defer buf.Close() // closes every Buffer it made
//	svc := stack.New[string, string]().
//		Layer(buf). // Buffer > Timeout > ConcurrencyLimit(1)
//		Layer(timeout.NewLayer[string, string](150 * time.Millisecond)).
//		Layer(limit.NewConcurrencyLayer[string, string](1)).
//		Service(handler)
//
// A Buffer turns "wait for capacity in Ready" into "wait in Call, in a
// queue": its Ready only reserves a slot in the queue, and the inner
// service sees one waiter, asked on behalf of one request at a time (see
// [Buffer]). It is for callers that cannot wait for readiness themselves
// (a load shedder above it sheds only when the queue is full), or for a
// service many callers share as one waiter.
//
// # Where it sits
//
// The first layer in a list is the outermost. A Timeout outside a Buffer
// times the queueing as well as the call; a Timeout inside it starts its
// clock only once the inner service is ready for the request. So Timeout >
// Buffer > ConcurrencyLimit(1) times out requests still in the queue,
// where the stack above does not (examples/placement and examples/queueing
// show both). To bound a caller's whole wait, give its ctx a deadline.
//
// A Buffer adds capacity: bound queued requests, plus the one whose turn
// it is. Buffer(100) > ConcurrencyLimit(10) lets 111 requests in before
// callers wait in Ready; ConcurrencyLimit(10) > Buffer(100) lets 10.
//
// # Stopping
//
// A Buffer starts no goroutine, so one that nothing references is
// collected like any value. [Buffer.Close] (or [Layer.Close], for every
// Buffer a layer made) is for the callers: after it, Ready and Call fail
// with [ErrClosed]. [Buffer.Shutdown] and [Layer.Shutdown] also bound the
// wait for the request in the inner service's Ready. A Buffer whose inner
// service's Ready fails or panics fails for good, with one shared
// [*ServiceError]. It writes no log unless given [WithLogger].
package buffer
