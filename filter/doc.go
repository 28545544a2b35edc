// Package filter decides, request by request, whether a request may reach
// a service: tower's Filter and AsyncFilter.
//
// A predicate looks at each request and either returns the request to send,
// the same one or a changed one, or an error that rejects it. A rejected
// request never reaches the inner service: the caller gets the predicate's
// error as it is, so errors.Is and errors.As see exactly what the predicate
// returned, and the inner service's reservation is given back unused.
// [New] takes a [Predicate], a plain function of the request; [NewAsync]
// takes an [AsyncPredicate], which also gets the call's ctx, and may take
// time or ask another service (an authorization server, a quota store)
// under the request's deadline.
//
//	var errNoUser = errors.New("no user")
//	svc := filter.New(handler, func(req Request) (Request, error) {
//		if req.User == "" {
//			return req, errNoUser
//		}
//		req.User = strings.ToLower(req.User)
//		return req, nil
//	})
//
// # Where it sits
//
// The predicate runs in Call, because that is when the request exists; the
// Filter's Ready is the inner service's, so by then the inner capacity is
// reserved, and stays reserved while the predicate runs. tower does the
// same. That decides what to put around and under it, the first layer
// listed outermost:
//
//   - Filter > Buffer > ...: the Buffer's Ready reserves only a queue slot,
//     so a rejected request never queues and never holds the inner
//     service's capacity; the predicate, even a slow one, holds one slot.
//     This is the placement for an AsyncPredicate that calls out.
//   - Filter > ConcurrencyLimit: the limit's permit is held while the
//     predicate runs, and given back as soon as it rejects.
//   - Timeout > Filter: the predicate's time counts towards the timeout;
//     Filter > Timeout does not count it.
//
// A Filter keeps the request's type, so that it can be a layer. To check a
// request and convert it to another type, put a Filter around a
// [tower.MapRequest]: the predicate rejects what cannot be converted, and
// MapRequest converts the rest.
package filter
