// Package throttle is client-side adaptive throttling, as the Google SRE
// book's chapter 21 ("Handling Overload") describes it: a client whose
// backend has been refusing requests rejects some of its own before
// sending them, so that an overloaded backend spends less of its work on
// refusing.
//
// A [Throttle] counts, over a sliding window (two minutes by default),
// the requests its caller attempted and the accepts: those the backend
// took and answered, whatever the answer. It rejects a new request itself
// with probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// capped (at 0.9 by default), and fails it with [ErrThrottled]. The
// requests rejected locally count among the requests: the more the client
// rejects, the more it goes on rejecting, until the backend accepts again.
// While the backend accepts at least one request in K, nothing is
// rejected. Past that, a client offered more than the backend takes sends
// it, in the long run, K times what it accepts: with the default K = 2,
// the backend refuses about as many requests as it serves, however much
// more the client is offered.
//
//	svc := tower.NewBuilder[string, string]().
//		Layer(throttle.NewLayer[string, string](throttle.NotOverloaded)).
//		Service(client)
//
// # Parameters and defaults
//
//   - K ([WithK], default 2, the book's and Finagle's NackAdmissionFilter's):
//     how many times what the backend accepts a client may send it. A
//     lower K rejects sooner; K must be at least 1, or a backend that
//     accepts everything would still see requests rejected. Envoy's
//     admission control is the same rule with K = 1/sr_threshold.
//   - The window ([WithWindow], default two minutes, the book's and
//     Finagle's): kept as 120 buckets (one second each by default) that
//     leave it lazily, on the first request after their time: no goroutine
//     runs.
//   - The cap on the rejection probability ([WithMaxRejection], default
//     0.9, failsafe-go's; Envoy caps at 0.8, Finagle at 0.75). The formula
//     stays below 1, but with nothing accepted for a window it lets through
//     about one request per window, whatever the rate: a backend that has
//     recovered would wait that long to be asked. The cap keeps a tenth of
//     the traffic flowing to it, so that its recovery shows within seconds.
//
// # What counts
//
// The classifier given to [New] says whether the backend accepted a
// request, from the call's result: [NotOverloaded] reads the error, and
// counts as refused an error that answers tower.IsOverloaded,
// tower.IsThrottled or tower.IsUnavailable. A request is counted once:
//
//   - a rejected request, when its permit's Call fails it with
//     ErrThrottled: a request, not an accept;
//   - a request sent, when its call returns: a request, and an accept if
//     the classifier says so. Counting it when it starts would count
//     calls in flight as refused until they end, and a burst of slow
//     calls from a fresh client would be throttled before any answer.
//
// A permit released unused, a call that panics, and a call that fails
// while its context is cancelled are not counted at all: the caller gave
// up, which tells nothing of the backend. A call that runs out of time is
// counted as the classifier says (NotOverloaded: accepted, as the book
// counts only the backend's refusals).
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. The decision is made in Ready, before anything is
// reserved: a rejected request waits for nothing and holds nothing of the
// layers below. Put the Throttle where what it counts is the backend's
// answer:
//
//   - Retry > Throttle: each attempt is counted, and a rejected attempt
//     fails at once with ErrThrottled, which a retry policy should not
//     retry at once.
//   - Throttle > Balancer: one Throttle for the backend as a whole, as the
//     book has it, rather than one per endpoint.
//   - Throttle > LoadShed > ConcurrencyLimit would count the client's own
//     shedding as the backend's refusals: put the Throttle inside such
//     layers, or give it a classifier that reads only the backend's
//     answers.
//
// With [WithMetrics], a Throttle reports metrics.Throttled for each
// request it rejects.
package throttle
