// Package callall sends a stream of requests through a service and yields
// the stream of its responses: tower's CallAll and CallAllUnordered. Use
// [Ordered] for responses in request order or [Unordered] for completion
// order; [OrderedChan] and [UnorderedChan] take the requests from a channel.
//
//	for rsp, err := range callall.Ordered(ctx, svc, slices.Values(reqs), 8) {
//		if err != nil {
//			log.Print(err) // one failed request; the others go on
//			continue
//		}
//		use(rsp)
//	}
//
// The last argument bounds the requests out at once, from being taken to
// the loop body being done with the response, so a loop that falls behind
// holds the requests back. A request is taken only once there is room for
// it, and before the service is asked for readiness, so a call-all waiting
// for its next request holds nothing of the service's (a Buffer slot, a
// concurrency permit). Each call runs on a worker goroutine.
//
// An error in a response is one item of the sequence, which goes on. An
// error from the service's Ready means it is broken for good: no more
// requests are taken, the error is yielded once, as the next item, then
// the responses of the requests already sent, and the sequence ends; a
// request taken but not sent is dropped. When ctx ends, the same happens
// with ctx's error.
//
// A panic or runtime.Goexit in the request iterator or the service's Ready
// is recovered into a [*tower.PanicError] that stops the sequence as a
// failed Ready does; in a call, it is that request's error. A panic in the
// loop body goes on up once the calls in flight have returned. A recovered
// panic the loop body never saw, because it ended early, is logged to
// log/slog's default logger.
//
// No goroutine outlives the range loop. Breaking out of it cancels the
// calls in flight and waits for them and for the iterator, which runs on a
// goroutine of its own: an iterator that can block must return when yield
// returns false, or be a channel given to [OrderedChan]. Each range over
// the result starts a new run, over the requests again.
package callall
