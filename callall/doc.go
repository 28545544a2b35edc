// Package callall sends a stream of requests through a service and yields
// the stream of its responses: tower's CallAll and CallAllUnordered.
//
// The requests come from an iterator ([Ordered], [Unordered]) or a channel
// ([OrderedChan], [UnorderedChan]); the responses are an iter.Seq2 of
// response and error, ranged over as they come, in request order or in
// completion order:
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
// the loop body being done with the response: so many calls overlap, and a
// loop that falls behind holds the requests back.
//
// # Readiness
//
// Each request is taken first, and only then is the service asked for
// readiness, so a call-all waiting for its next request holds nothing of
// the service's: a Buffer slot or a concurrency permit stays free for other
// callers (tower #656 and #709). Each call has the permit of its own
// Ready, as the readiness contract has it, and runs on a worker goroutine,
// so that calls overlap.
//
// # Errors
//
// An error in a response is one item of the sequence, and the sequence goes
// on. An error from the service's Ready means the service is broken for
// good, so the sequence stops taking requests: it yields that error once,
// at once, then the responses of the requests already sent, and ends
// (tower #706). The same happens when ctx ends, with ctx's error.
//
// # Panics
//
// The requests' iterator and the service's Ready run on a goroutine of
// the call-all's, and the calls on worker goroutines: a panic there does
// not end the program. It is recovered into a [*tower.PanicError]: in a
// call, it is that request's error, and the sequence goes on; in Ready or
// in the iterator, it stops the sequence as an error from Ready does. A
// panic in the loop body goes on up to the caller, once the calls in
// flight have returned.
//
// # Stopping early
//
// No goroutine outlives the range loop. Breaking out of it cancels the
// calls in flight and waits for them before the loop ends.
package callall
