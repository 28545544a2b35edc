// Package filter rejects or rewrites requests before they reach a service:
// tower's Filter and AsyncFilter. Use [New] with a [Predicate], a function
// of the request, or [NewAsync] with an [AsyncPredicate], which also gets
// the call's ctx, to ask another service (an authorization server, a quota
// store) under the request's deadline.
//
//	svc := filter.New(handler, func(req Request) (Request, error) {
//		if req.User == "" {
//			return req, errNoUser
//		}
//		req.User = strings.ToLower(req.User)
//		return req, nil
//	})
//
// A rejected request never reaches the inner service: the caller gets the
// predicate's error unchanged, and the inner reservation is given back
// unused.
//
// As in tower, the predicate runs in Call, while the inner capacity that
// Ready reserved is held. With the first layer listed outermost:
//
//   - Filter > Buffer: a rejected request never queues; a predicate, even a
//     slow one that calls out, holds one queue slot.
//   - Filter > ConcurrencyLimit: the limit's permit is held while the
//     predicate runs, and given back as soon as it rejects.
//   - Timeout > Filter: the predicate's time counts towards the timeout.
//
// A Filter keeps the request's type, so that it can be a layer. To check a
// request and convert it, put a Filter around a [tower.MapRequest].
package filter
