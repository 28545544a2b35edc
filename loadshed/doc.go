// Package loadshed turns "not ready now" into an immediate error: tower's
// LoadShed. Wrap a service with [New], or stack [NewLayer], outside the
// layer whose waiting it should refuse, typically a concurrency limit (the
// first layer listed is the outermost):
//
//	svc := stack.New[string, string]().
//		Layer(loadshed.NewLayer[string, string]()). // LoadShed > ConcurrencyLimit(10)
//		Layer(limit.NewConcurrencyLayer[string, string](10)).
//		Service(handler)
//
// A [LoadShed]'s Ready does not wait: if the inner service can take a
// request now, the permit is the inner service's own; if not, the permit's
// Call fails at once with [ErrOverloaded], and the caller can retry
// elsewhere. Inside the limit, LoadShed would shed nothing. Outside a
// Buffer, it sheds only once the queue is full: LoadShed > Buffer(100) >
// ConcurrencyLimit(10) takes 111 requests (10 in flight, 1 in the Buffer
// worker's hand, 100 queued), then sheds.
//
// LoadShed sheds whenever the inner service is not ready at that instant,
// for any reason: a full limit, a closed rate window, a connection being
// made. Put it outside what says "not ready" only when that means
// "overloaded", or give it [WithPatience].
package loadshed
