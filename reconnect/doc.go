// Package reconnect keeps a service alive across failures by making a new
// one when the current one breaks: tower's Reconnect. Build a [Reconnect]
// with [New] from a [MakeService] (often a [MakeFunc]) and a target, and
// close it when done.
//
// A MakeService's Call connects (dials, handshakes, loads a config) and
// returns a service for the target. The Reconnect holds one; when it fails
// its readiness check, which under the readiness contract means it is
// broken for good, Reconnect drops it and makes a new one. Above it, the
// stack sees one service that stays ready across reconnects; under a
// balancer, one Reconnect per endpoint keeps a broken connection from
// failing the others:
//
//	dial := reconnect.MakeFunc[string, Req, Res](func(ctx context.Context, addr string) (tower.Service[Req, Res], error) {
//		return connect(ctx, addr)
//	})
//	maker := timeout.New(dial, 2*time.Second) // a connect takes 2s at most
//	conn := reconnect.New(maker, "db-1:5432")
//	defer conn.Close()
//	svc := stack.New[Req, Res]().
//		Layer(timeout.NewLayer[Req, Res](time.Second)).
//		Service(conn)
//
// # Errors
//
// As in tower, a failed connect does not fail Ready, which would break the
// Reconnect for good: Ready returns a permit whose Call returns a
// [*ConnectError] without sending the request, and the next Ready connects
// again. So a caller that only asks "ready now?" (a balancer probing its
// endpoints) may send a request that fails with a ConnectError; it went
// nowhere, and can safely be retried. Only a failure of the maker's own
// Ready fails Ready, for good.
//
// # Connecting
//
// Reconnect goes innermost in a client stack, on top of the maker. One
// connect runs at a time, on a goroutine of its own, shared by every
// caller that needs it; otherwise no goroutine runs. A caller whose ctx
// ends gets ctx.Err(), and the connect goes on for the next caller, so
// Ready with a done ctx starts a connect and returns at once. The
// connect's context keeps the values of the starting caller's ctx, but not
// its deadline or cancellation, which would fail it for the others: bound
// a connect with a timeout on the maker, as above.
//
// [Reconnect.Close] cancels a connect in progress and closes the current
// service. A runtime cleanup cancels the connect of a Reconnect that
// becomes unreachable unclosed, and logs a warning; it runs outside every
// testing/synctest bubble, where that is fatal, so a test must close what
// it makes.
//
// # Panics
//
// A panic or runtime.Goexit in the maker, on the connect goroutine, is
// recovered into a [*tower.PanicError] that goes where the maker's error
// would: in its Ready it breaks the Reconnect for good; in its Call it is
// a failed connect, reported as a *ConnectError that wraps it. A panic in
// the Close of a service made after Close is logged to log/slog's default
// logger. A panic in the current service's Ready goes on up to the caller,
// once Reconnect has dropped that service, started a connect for the next
// caller, and closed it. A panic in a permit's Call changes nothing.
//
// [WithLogger] logs failed connects, dropped services and a broken maker;
// by default nothing is logged.
package reconnect
