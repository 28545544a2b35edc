// Package stack declares a stack of this module's middleware once, with
// its type arguments given once: tower's ServiceBuilder, with a method per
// middleware.
//
//	svc := stack.New[string, string]().
//		Timeout(time.Second).                            // one clock for every attempt
//		Retry(retry.AnyError, retry.WithMaxAttempts(3)). // a failed attempt is sent again
//		ConcurrencyLimit(10).                            // each attempt waits for a permit
//		RateLimit(100, time.Second).                     // and a place in the window
//		ServiceFunc(send)
//
// Each method adds one layer inside those added before it, so the first
// method called is the outermost layer: it sees the request first. It is
// the order of [tower.Builder], of tower's ServiceBuilder, and of every
// list of layers in this module. Where a layer sits decides what it
// measures (the package docs of timeout, limit and buffer say how), so
// read a chain from the top down, as the request goes.
//
// A method is a thin call of its package's constructor, with the options
// of that package: Timeout(d, opts...) is timeout.NewLayer[Req, Res](d,
// opts...), and the stack it builds is the stack those layers build by
// hand, with the same cost per request. Bad input panics in that
// constructor, with its message, which names the parameter.
//
// # Layers and services
//
// [Builder.Layer] adds any [tower.Layer]: middleware of one's own, a
// combinator such as tower.MapRequestLayer, or another Builder.
// [Builder.Service] wraps a service in the layers, and
// [Builder.ServiceFunc] a function. A Builder is a tower.Layer itself, so
// it is what the adapters take, towerhttp.NewHandler and
// towerhttp.NewTransport for two. towerhttp has constructors for Builders
// of its types, towerhttp.ServerStack for one, which take no type
// arguments at all.
//
// # A limit with no number to choose
//
// [Builder.AdaptiveLimit] adds package adaptive's limit, which an
// algorithm moves as it sees each call's latency and drops. Under a
// LoadShed it turns a server away from more than it can take without a
// number anyone had to size:
//
//	towerhttp.ServerStack().LoadShed().AdaptiveLimit(adaptive.Gradient2())
//
// # Retries
//
// [Builder.Retry] takes the classifier and the options of a
// [retry.StandardPolicy]; [Builder.RetryWith] takes the options of the
// Retry itself too ([retry.WithMetrics]), after the policy's, which it
// takes as a slice; [Builder.RetryPolicy] takes a policy of one's own.
// None needs a type argument.
//
// # Closing
//
// A Buffer holds its queue beyond any request, and is closed, to fail
// what it still holds and refuse what comes, by [Builder.Close] or
// [Builder.Shutdown]: they close every Buffer the Builder's Buffer layers
// made, for every service it wrapped. A stack without a Buffer holds
// nothing, and needs no Close. Keep the Builder that built the stack,
// even when only the service or the handler is used, and close it when
// the stack is done with:
//
//	protect := towerhttp.ServerStack().LoadShed().Buffer(100).ConcurrencyLimit(10)
//	defer protect.Close()
//	srv := &http.Server{Handler: towerhttp.NewHandler(mux, protect)}
package stack
