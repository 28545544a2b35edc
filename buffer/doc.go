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
// A Buffer's Ready does not ask the inner service: it reserves one of
// bound slots in the queue. Call queues the request and, in its turn,
// waits until the inner service is ready and sends it; so the inner
// service sees one waiter, asked on behalf of one request at a time in the
// order they queued (see [Buffer]). A caller that gives up while its
// request waits leaves the queue at once. A Buffer turns "wait for
// capacity in Ready" into "wait in Call, in a queue": for callers that
// cannot wait for readiness themselves (a load shedder above it sheds only
// when the queue is full), or for a service many callers share as one
// waiter.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. A Timeout outside a Buffer times the queueing as well as
// the call, since the Buffer's Ready returns at once and its Call waits in
// the queue; a Timeout inside it starts its clock only once the inner
// service is ready for the request. So Timeout > Buffer >
// ConcurrencyLimit(1) times out requests still in the queue, where the
// stack above does not (examples/placement and examples/queueing show
// both). To bound a caller's whole wait, give its ctx a deadline: the
// request waits for the inner service under the ctx given to Call.
//
// A Buffer adds capacity: bound queued requests, plus the one whose turn
// it is. Buffer(100) > ConcurrencyLimit(10) lets 111 requests in before
// callers wait in Ready; ConcurrencyLimit(10) > Buffer(100) lets 10.
//
// # Stopping
//
// A Buffer starts no goroutine, so one that nothing references is
// collected like any value, and there is nothing to stop. [Buffer.Close]
// (or [Layer.Close], for every Buffer a layer made) is for the callers:
// after it, Ready and Call fail with [ErrClosed], and the request waiting
// in the inner service's Ready has its context ended. [Buffer.Shutdown]
// and [Layer.Shutdown] bound the wait for that Ready with a context.
//
// A Buffer whose inner service's Ready fails or panics fails for good,
// with one shared [*ServiceError]; see [Buffer]. It writes no log unless
// given [WithLogger]. A request that queues has its time in the queue
// reported to the [metrics.Tracer] its context carries, as a "tower.queue"
// span in a tracing adapter.
package buffer
