// Package steer sends each request to one of several services, chosen by a
// [Picker] that sees the request: tower's Steer. Build one with [New].
//
//	svc := steer.New([]tower.Service[*http.Request, *http.Response]{api, static},
//		func(_ context.Context, req *http.Request, _ int) int {
//			if strings.HasPrefix(req.URL.Path, "/api/") {
//				return 0
//			}
//			return 1
//		})
//
// Which service a request needs is known only when it is called, so a
// [Steer]'s Ready reserves nothing and never fails; its permit's Call picks
// the service, waits under the call's ctx until that service is ready, and
// calls it. A caller whose ctx ends meanwhile gets ctx.Err() unchanged and
// leaves nothing reserved. Unlike tower's Steer, which waits until every
// service is ready, a slow or broken service holds up only its own requests.
//
// The layers around a Steer see no wait. The first layer listed is the
// outermost:
//
//   - Timeout > Steer: the timeout counts the wait for the chosen service
//     too. To time only the call, put a Timeout on each service instead.
//   - LoadShed > Steer sheds nothing. Put a LoadShed on each service.
//   - ConcurrencyLimit > Steer: a request waiting for its service holds a
//     permit of the limit. A limit on each service keeps a slow service
//     from using up the others' share.
//
// A picker that returns an index out of range fails that request with an
// [*Error] whose Err is [ErrBadPick]. A service whose Ready fails is broken
// for good: that request and every later one picked for it fail with the
// same *Error, and nothing is sent to it again; [Steer.Broken] reports it.
package steer
