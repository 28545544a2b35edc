// Package steer sends each request to one of several services, chosen by a
// picker that sees the request: tower's Steer, without tower's wait for
// every service to be ready.
//
//	svc := steer.New([]tower.Service[*http.Request, *http.Response]{api, static},
//		func(_ context.Context, req *http.Request, _ int) int {
//			if strings.HasPrefix(req.URL.Path, "/api/") {
//				return 0
//			}
//			return 1
//		})
//
// # Readiness: the wait is in Call
//
// Ready happens before the request exists, so when a caller asks a Steer
// for readiness, nobody knows yet which service the request will need.
// tower's Steer answers by waiting until every service is ready. That is
// head-of-line blocking: one slow or overloaded service stops the requests
// for all the others, and one broken service breaks the whole Steer
// (tower issues #625 and #859). A Go caller holds a reservation of its own,
// so the same design here would be worse still: every caller's Ready would
// reserve capacity on every service, and a concurrency limit of one on any
// service would let only one request through the Steer at a time.
//
// So a [Steer]'s Ready reserves nothing and returns at once, and its
// permit's Call does the work: it picks the service for the request, waits
// until that service is ready, under the call's ctx, and calls it. A
// service that is not ready holds up only the requests picked for it;
// requests for the others go through at once. The contract holds: Ready
// hands out a permit that Call honours, a permit released unused leaves
// nothing behind, and a caller whose ctx ends while Call waits gets
// ctx.Err() unchanged and leaves nothing reserved.
//
// Two other designs were weighed. A picker that decides in Ready from a
// routing key in ctx could reserve exactly the chosen service; but Ready
// then depends on values that not every caller passes down: [tower.ReadyNow]
// carries none, and a load shedder or a balancer probing asks with it. And
// tower's all-ready wait, as an option, would bring back the
// head-of-line blocking above and hold capacity on services a request does
// not use.
//
// # Where it sits
//
// Because the wait for the chosen service is in Call, a Steer is always
// ready, as a Buffer is, and the layers around it see that. In every list
// of layers the first one is the outermost:
//
//   - Timeout > Steer: the timeout counts the wait for the chosen service's
//     readiness as well as the call. To time only the call, put a Timeout
//     around each service inside the Steer instead.
//   - LoadShed > Steer sheds nothing: the Steer is always ready. To shed,
//     put a LoadShed around each service inside the Steer, where "not ready"
//     means that service is full.
//   - ConcurrencyLimit > Steer: a request waiting for its service holds one
//     of the limit's permits meanwhile. A limit per service, inside the
//     Steer, keeps a slow service from using up the others' share.
//
// # Errors
//
// A picker that returns an index out of range is a bug in the picker, but
// one that shows only for some requests, so the request fails, with an
// [*Error] whose Err is [ErrBadPick], rather than the process. A service
// whose Ready fails is broken for good, by the contract: the request that
// found it broken, and every later request picked for it, fails with the
// same *Error, which names the service's index, and no request is sent to
// it again; the other services go on serving, and [Steer.Broken] reports
// it. The Steer itself is never broken: its Ready does not fail, even when
// every service has. An empty list of services is a mistake in the code that builds the
// Steer: [New] panics.
package steer
