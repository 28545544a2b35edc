// Package stack declares a stack of this module's middleware with its type
// arguments given once: [New] returns a [Builder] with a method per
// middleware, tower's ServiceBuilder.
//
//	svc := stack.New[string, string]().
//		Timeout(time.Second).                            // one clock for every attempt
//		Retry(retry.AnyError, retry.WithMaxAttempts(3)). // a failed attempt is sent again
//		ConcurrencyLimit(10).                            // each attempt waits for a permit
//		RateLimit(100, time.Second).                     // and a place in the window
//		ServiceFunc(send)
//
// Each method adds one layer inside those added before it, so the first
// method called is the outermost layer: it sees the request first. Where a
// layer sits decides what it measures (see the package docs of timeout,
// limit and buffer), so read a chain from the top down, as the request
// goes.
//
// A method is a thin call of its package's constructor with the same
// arguments and options, at the same cost per request, and panics where
// that constructor does, with its message. [Builder.Layer] adds any other
// [tower.Layer]. A Builder is a tower.Layer itself, so the adapters take
// it (towerhttp.NewHandler, towerhttp.NewTransport).
//
// A Buffer holds its queue beyond any request: keep the Builder that built
// a stack with a Buffer, even when only the service or the handler is
// used, and close it when done ([Builder.Close], [Builder.Shutdown]).
package stack
