// Package steer sends each request to one of several services, chosen by a
// [Picker] that sees the request: tower's Steer, without tower's wait for
// every service to be ready. Build one with [New].
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
// When a caller asks for readiness, nobody knows yet which service the
// request needs. tower's Steer waits until every service is ready, so one
// slow service stops the requests for all the others, one broken service
// breaks the whole Steer, and here, where each caller holds a reservation,
// every Ready would reserve capacity on every service. A [Steer]'s Ready
// reserves nothing; its permit's Call picks the service, waits under the
// call's ctx until that service is ready, and calls it. A caller whose ctx
// ends meanwhile gets ctx.Err() unchanged and leaves nothing reserved.
// (Picking in Ready from a routing key in ctx would not work for callers
// that pass none, such as [tower.ReadyNow] probes.)
//
// A Steer is always ready, as a Buffer is. The first layer listed is the
// outermost:
//
//   - Timeout > Steer: the timeout counts the wait for the chosen service
//     too. To time only the call, put a Timeout on each service instead.
//   - LoadShed > Steer sheds nothing. Put a LoadShed on each service.
//   - ConcurrencyLimit > Steer: a request waiting for its service holds a
//     permit of the limit. A limit on each service keeps a slow service
//     from using up the others' share.
//
// # Errors
//
// A picker that returns an index out of range fails that request, with an
// [*Error] whose Err is [ErrBadPick], not the process. A service whose
// Ready fails is broken for good: that request and every later one picked
// for it fail with the same *Error, and nothing is sent to it again; the
// others go on serving, and [Steer.Broken] reports it. The Steer's own
// Ready never fails. [New] panics on an empty list of services.
package steer
