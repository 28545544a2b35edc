// Package buffer puts a queue, and one worker goroutine, in front of a
// service: tower's Buffer.
//
// A [Buffer]'s Ready does not ask the inner service; it reserves one of
// bound slots in the queue, and waits only while all are taken. Call queues
// the request; the worker takes requests in order and, for each, waits
// until the inner service is ready, then hands the inner permit back to the
// caller, whose goroutine makes the call. A caller that gives up while its
// request waits (its ctx ends) is skipped, and the inner service never sees
// its request.
//
// So a Buffer turns "wait for capacity in Ready" into "wait in Call, in a
// queue". That is what it is for: callers that cannot wait for readiness
// themselves, or a service many callers share through one worker. It is
// also why where it sits matters.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. A Timeout outside a Buffer times the queueing as well as
// the call, because the Buffer's Ready returns at once and its Call waits
// in the queue; a Timeout inside the Buffer starts its clock only when the
// worker has found the inner service ready:
//
//	buf := buffer.NewLayer[string, string](8)
//	defer buf.Close() // stops the workers of every Buffer it made
//	svc := tower.NewBuilder[string, string]().
//		Layer(buf). // Buffer > Timeout > ConcurrencyLimit(1)
//		Layer(timeout.NewLayer[string, string](150 * time.Millisecond)).
//		Layer(limit.NewConcurrencyLayer[string, string](1)).
//		Service(handler)
//
// With three callers and 100ms per request, that stack answers all three,
// at 100, 200 and 300ms. Swap the first two layers, Timeout > Buffer >
// ConcurrencyLimit(1), and all three clocks start at 0ms: requests 2 and 3
// time out at 150ms while they wait in the queue (the book's placement
// table, seed 000 B, and its queueing chapter, seed 001; the programs in
// examples/placement and examples/queueing print them). To bound a
// caller's whole wait, queueing included, give the caller's ctx a deadline:
// the worker waits for the inner service under the ctx given to Call.
//
// A Buffer also adds capacity: bound requests queued, plus one in the
// worker's hand. Buffer(100) > ConcurrencyLimit(10) lets 111 requests in
// (10 in flight, 1 in hand, 100 queued) before callers wait in Ready;
// ConcurrencyLimit(10) > Buffer(100) lets 10.
//
// # Stopping
//
// Each Buffer runs a worker goroutine until it is closed ([Buffer.Close],
// or [Layer.Close] for every Buffer a layer made), until the inner service
// fails, or until the garbage collector finds the Buffer unreachable with
// no permit outstanding and no call in flight. After Close, Ready and Call
// fail with [ErrClosed]; after the inner service fails, with one shared
// [*ServiceError]. Close waits for the worker to exit, which may be waiting
// in the inner service's Ready: for as long as that Ready takes to heed
// the end of its context. [Buffer.Shutdown] and [Layer.Shutdown] do what
// Close does but wait only until a context ends, as net/http's
// Server.Shutdown does:
//
//	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
//	defer cancel()
//	if err := buf.Shutdown(ctx); err != nil {
//		// The worker exits on its own once the inner Ready returns.
//	}
//
// Inside a testing/synctest bubble the garbage collector stops no worker
// (its cleanups run outside the bubble, where they could not): close every
// Buffer a test makes, or the Layer that made it, and synctest reports a
// worker left running when the test ends.
//
// # Panics
//
// A panic in the inner service's Ready is that service failing its
// readiness, and fails the Buffer for good, wherever it happens. On the
// worker goroutine the worker recovers it (or a runtime.Goexit) into a
// [*tower.PanicError] that says where it happened and carries its stack;
// every caller, from the one whose request was in hand to every later one,
// gets a *ServiceError wrapping it, and the process lives on. On a
// caller's goroutine, which asks the inner service itself when nothing is
// queued, the Buffer fails the same way, gives that caller's slot back,
// and the panic goes on up to that caller. A panic in the inner service's
// Call happens on the caller's goroutine and goes on up to it; the Buffer
// serves on.
package buffer
