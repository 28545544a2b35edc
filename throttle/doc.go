// Package throttle is client-side adaptive throttling, as the Google SRE
// book's chapter 21 ("Handling Overload") describes it. Wrap a client with
// [New] or [NewLayer] and the classifier [NotOverloaded]: while the
// backend refuses requests, the [Throttle] rejects some itself before
// sending them, so that an overloaded backend spends less work on
// refusing.
//
//	svc := stack.New[string, string]().
//		Layer(throttle.NewLayer[string, string](throttle.NotOverloaded)).
//		Service(client)
//
// Over a sliding window ([WithWindow]) a Throttle counts the requests its
// caller attempted and the accepts: those the backend took and answered,
// whatever the answer. It fails a new request with [ErrThrottled] with
// probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// capped by [WithMaxRejection]. Requests rejected locally count among the
// requests, so rejecting goes on until the backend accepts again. While
// the backend accepts at least one request in K ([WithK]), nothing is
// rejected; past that, a client offered more than the backend takes sends
// it, in the long run, K times what it accepts.
//
// A request is counted once: a rejected one when its permit's Call fails
// with ErrThrottled; a sent one when its call returns, as the classifier
// says. A permit released unused, a call that panics, and a call that
// fails while its ctx is cancelled are not counted: the caller gave up.
//
// # Where it sits
//
// The first layer in a list is the outermost. Put the Throttle where what
// it counts is the backend's answer:
//
//   - Retry > Throttle: each attempt is counted; a retry policy should not
//     retry ErrThrottled at once.
//   - Throttle > Balancer: one Throttle for the backend as a whole, as the
//     book has it, rather than one per endpoint.
//   - Throttle > LoadShed > ConcurrencyLimit would count the client's own
//     shedding as the backend's refusals: put the Throttle inside such
//     layers, or give it a classifier that reads only the backend's answers.
package throttle
