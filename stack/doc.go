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
// method called is the outermost layer: it sees the request first, as in
// every list of layers in this module. Where a layer sits decides what it
// measures (see the package docs of timeout, limit and buffer), so read a
// chain from the top down, as the request goes.
//
// A method is a thin call of its package's constructor, with that
// package's options: Timeout(d, opts...) is timeout.NewLayer[Req, Res](d,
// opts...), at the same cost per request. Bad input panics in that
// constructor, with a message that names the parameter.
//
// [Builder.Layer] adds any other [tower.Layer], another Builder included.
// A Builder is a tower.Layer itself, so the adapters take it
// (towerhttp.NewHandler, towerhttp.NewTransport); towerhttp.ServerStack and
// its kin return Builders of towerhttp's types with no type arguments.
//
// A Buffer holds its queue beyond any request. [Builder.Close] and
// [Builder.Shutdown] close every Buffer the Builder's Buffer layers made,
// for every service it wrapped; a stack without a Buffer needs no Close.
// Keep the Builder that built the stack, even when only the service or the
// handler is used, and close it when done.
package stack
