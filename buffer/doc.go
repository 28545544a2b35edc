// Package buffer puts a bounded queue in front of a service: tower's
// Buffer.
//
// A [Buffer]'s Ready does not ask the inner service; it reserves one of
// bound slots in the queue, and waits only while all are taken. Call queues
// the request and waits for its turn; in its turn, the request waits until
// the inner service is ready, hands the turn on, and is sent. So the inner
// service is asked for readiness on behalf of one request at a time, in
// the order they were queued, as tower's Buffer has its worker ask it. A
// caller that gives up while its request waits (its ctx ends) leaves the
// queue at once, and the inner service never sees its request.
//
// So a Buffer turns "wait for capacity in Ready" into "wait in Call, in a
// queue". That is what it is for: callers that cannot wait for readiness
// themselves (a load shedder above it sheds only when the queue is full),
// or a service many callers share as one waiter. It is also why where it
// sits matters.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. A Timeout outside a Buffer times the queueing as well as
// the call, because the Buffer's Ready returns at once and its Call waits
// in the queue; a Timeout inside the Buffer starts its clock only when the
// request has found the inner service ready, in its turn:
//
//	buf := buffer.NewLayer[string, string](8)
//	defer buf.Close() // closes every Buffer it made
//	svc := tower.NewBuilder[string, string]().
//		Layer(buf). // Buffer > Timeout > ConcurrencyLimit(1)
//		Layer(timeout.NewLayer[string, string](150 * time.Millisecond)).
//		Layer(limit.NewConcurrencyLayer[string, string](1)).
//		Service(handler)
//
// With three callers and 100ms per request, that stack answers all three,
// at 100, 200 and 300ms. Swap the first two layers, Timeout > Buffer >
// ConcurrencyLimit(1), and all three clocks start at 0ms: requests 2 and 3
// time out at 150ms while they wait in the queue (the programs in
// examples/placement and examples/queueing print both). To bound a
// caller's whole wait, queueing included, give the caller's ctx a deadline:
// the request waits for the inner service under the ctx given to Call.
//
// A Buffer also adds capacity: bound requests queued, plus the one whose
// turn it is. Buffer(100) > ConcurrencyLimit(10) lets 111 requests in (10
// in flight, 1 in turn, 100 queued) before callers wait in Ready;
// ConcurrencyLimit(10) > Buffer(100) lets 10.
//
// # Stopping
//
// A Buffer starts no goroutine: the request whose turn it is waits for the
// inner service on its caller's goroutine. So a Buffer nothing references
// is collected like any value, and there is nothing to stop. Close
// ([Buffer.Close], or [Layer.Close] for every Buffer a layer made) is for
// the callers: after it, Ready and Call fail with [ErrClosed] (after the
// inner service fails, with one shared [*ServiceError]); queued callers
// and callers waiting in Ready are woken with it; and the request waiting
// in the inner service's Ready has its context ended. Close waits until
// that Ready returns, for as long as it takes to heed the end of its
// context. [Buffer.Shutdown] and [Layer.Shutdown] do what Close does but
// wait only until a context ends, as net/http's Server.Shutdown does:
//
//	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
//	defer cancel()
//	if err := buf.Shutdown(ctx); err != nil {
//		// An inner Ready has not returned yet; its caller gets ErrClosed
//		// once it does.
//	}
//
// # Tracing and logging
//
// A request that queues, and whose context carries a [metrics.Tracer],
// has its time in the queue reported to it, as a "tower.queue" attempt
// (a tracing adapter makes it a span); one that skips the queue pays
// nothing. A Buffer writes no log by default; given a *slog.Logger with
// [WithLogger], it logs the failure of its inner service that makes it
// fail every request, once.
//
// # Panics
//
// A panic in the inner service's Ready is that service failing its
// readiness, and fails the Buffer for good. It happens on the goroutine of
// the caller whose turn it was (or that asked without queueing, since
// nothing was queued), and goes on up to that caller once the Buffer has
// failed and that caller's slot and turn are given back; every other
// caller, queued, waiting in Ready or later, gets a *ServiceError wrapping
// a [*tower.PanicError] that says where it happened and carries its stack.
// A runtime.Goexit there does the same, and the goroutine goes on exiting.
// A panic in the inner service's Call happens on the caller's goroutine
// and goes on up to it; the Buffer serves on.
package buffer
