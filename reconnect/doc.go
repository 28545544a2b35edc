// Package reconnect keeps a service alive across failures by making a new
// one when the current one breaks: tower's Reconnect. Build a [Reconnect]
// with [New] from a [MakeService] (often a [MakeFunc]) and a target, put
// it innermost in a client stack, and close it when done:
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
// The Reconnect holds one service the maker made. When that service fails
// its readiness check, which under the readiness contract means it is
// broken for good, the Reconnect drops it, closes it if it has a Close
// method, and makes a new one. Under a balancer, one Reconnect per
// endpoint keeps a broken connection from failing the others.
//
// # Errors
//
// As in tower, a failed connect does not fail Ready, which would break the
// Reconnect for good: each caller waiting for it gets a permit whose Call
// returns a [*ConnectError] without sending the request, which can safely
// be retried; if nobody was waiting, the next caller gets it. The Ready
// after that connects again. A service that fails its very first
// readiness check counts as a failed connect, so a maker that keeps
// handing out a broken service costs one connect per Ready, not a busy
// loop. Only a failure of the maker's own Ready fails Ready, for good.
//
// # Connecting
//
// One connect runs at a time, on a goroutine of its own, shared by every
// caller that needs it; otherwise no goroutine runs. A caller whose ctx
// ends gets ctx.Err(), and the connect goes on for the next caller, so
// Ready with a done ctx starts a connect and returns at once. The
// connect's context keeps the values of the starting caller's ctx, but not
// its deadline or cancellation: bound a connect with a timeout on the
// maker, as above.
//
// A runtime cleanup cancels the connect of a Reconnect that becomes
// unreachable unclosed, and logs a warning; it runs outside every
// testing/synctest bubble, where that is fatal, so a test must close what
// it makes.
//
// # Panics
//
// A panic or runtime.Goexit in the maker is recovered into a
// [*tower.PanicError] that goes where the maker's error would: in its
// Ready it breaks the Reconnect for good; in its Call it is a failed
// connect. A panic in the Close of a service made after Close is logged to
// log/slog's default logger. A panic in the current service's Ready goes
// on up to the caller, once Reconnect has dropped and closed that service
// and started a connect for the next caller.
package reconnect
