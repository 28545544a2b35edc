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
// Over a sliding window ([WithWindow], default two minutes) a Throttle
// counts the requests its caller attempted and the accepts: those the
// backend took and answered, whatever the answer. It fails a new request
// with [ErrThrottled] with probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// capped by [WithMaxRejection]. Requests rejected locally count among the
// requests, so rejecting goes on until the backend accepts again. While
// the backend accepts at least one request in K ([WithK], default 2),
// nothing is rejected; past that, a client offered more than the backend
// takes sends it, in the long run, K times what it accepts.
//
// # What counts
//
// The classifier given to New says, from a sent call's result, whether the
// backend accepted it. A request is counted once: a rejected one when its
// permit's Call fails with ErrThrottled, as a request and not an accept; a
// sent one when its call returns, not when it starts, so that calls in
// flight do not count as refused. A permit released unused, a call that
// panics, and a call that fails while its ctx is cancelled are not
// counted: the caller gave up, which tells nothing of the backend. A call
// that runs out of time counts as the classifier says (NotOverloaded:
// accepted, as the book counts only the backend's refusals).
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. The decision is made in Ready, so a rejected request
// holds nothing of the layers below. Put the Throttle where what it counts
// is the backend's answer:
//
//   - Retry > Throttle: each attempt is counted; a retry policy should not
//     retry ErrThrottled at once.
//   - Throttle > Balancer: one Throttle for the backend as a whole, as the
//     book has it, rather than one per endpoint.
//   - Throttle > LoadShed > ConcurrencyLimit would count the client's own
//     shedding as the backend's refusals: put the Throttle inside such
//     layers, or give it a classifier that reads only the backend's answers.
package throttle
