// Package loadshed turns "not ready now" into an immediate error: tower's
// LoadShed.
//
// A [LoadShed]'s Ready never waits. It asks the inner service whether it can
// take a request now (see [tower.ReadyNow]); if it can, the permit is the
// inner service's own, and the request goes through. If it cannot, Ready
// still succeeds, with a permit whose Call fails at once with
// [ErrOverloaded] ("service overloaded") without reaching the inner
// service, which reserved nothing for it. Only an inner service that is
// broken fails Ready.
//
// # Where it sits
//
// In every list of layers the first one is the outermost: it sees the
// request first. LoadShed goes outside the layer whose waiting it should
// refuse, typically a concurrency limit: instead of queueing for a permit,
// a caller that finds the limit full is told so at once, and can retry
// elsewhere or report the overload.
//
//	svc := tower.NewBuilder[string, string]().
//		Layer(loadshed.NewLayer[string, string]()). // LoadShed > ConcurrencyLimit(10)
//		Layer(limit.NewConcurrencyLayer[string, string](10)).
//		Service(handler)
//
// Inside the limit, LoadShed would see a ready service every time and shed
// nothing. Outside a Buffer (package buffer), it sheds only once the queue
// is full: LoadShed > Buffer(100) > ConcurrencyLimit(10) takes 111 requests
// (10 in flight, 1 in the Buffer worker's hand, 100 queued), then sheds.
//
// LoadShed sheds whenever the inner service is not ready at that instant,
// for whatever reason: a full limit, a closed rate window, a connection
// being made. Put it outside what says "not ready" only when it means
// "overloaded".
//
// # Patience
//
// [WithPatience] makes a LoadShed wait a little before it sheds: a caller
// that finds the limit full waits for a permit up to the patience, and is
// shed only if none comes within it. A burst that lasts an instant (a
// limit full for a millisecond, an adaptive limit measuring its service
// at a low limit for a few) is then served instead of refused, while
// nobody waits longer than the patience for a service that stays full.
package loadshed
