// Package reconnect keeps a service alive across failures by making a new
// one when the current one breaks: tower's Reconnect, and the make-service
// abstraction it builds on.
//
// A [MakeService] is a service whose responses are services: given a
// target, its Call connects (dials, handshakes, loads a config) and returns
// a service for that target. It is an alias of a [tower.Service], so a
// timeout, a limit or a retry wraps a maker like any other service. A
// [Reconnect] holds one service made by a maker. When that service fails
// its readiness check, which under the readiness contract means it is
// broken for good, Reconnect drops it and makes a new one on the next
// Ready:
//
//	dial := reconnect.MakeFunc[string, Req, Res](func(ctx context.Context, addr string) (tower.Service[Req, Res], error) {
//		return connect(ctx, addr)
//	})
//	maker := timeout.New(dial, 2*time.Second) // a connect takes 2s at most
//	conn := reconnect.New(maker, "db-1:5432")
//	defer conn.Close()
//	svc := tower.NewBuilder[Req, Res]().
//		Layer(timeout.NewLayer[Req, Res](time.Second)).
//		Service(conn)
//
// # Errors
//
// Reconnect follows tower's choice (tower 0.4, issues #386 and #437): a
// connect that fails does not fail Ready, which would break the Reconnect
// for good, as the contract says. Ready returns a permit whose Call
// returns a [*ConnectError] without sending the request, and the next
// Ready connects again. The caller learns about the failure at the moment
// it would have learnt about any other failed request, and the Reconnect
// stays usable.
//
// The price, noted in tower's issues: a caller that only asks "ready now?"
// (a load balancer probing its endpoints) may see a Reconnect whose connect
// has just failed as ready, and send it a request that fails with a
// ConnectError. errors.As tells such a failure from one of the service's
// own, and the request, which went nowhere, can safely be retried.
//
// # Where it sits
//
// Reconnect is the innermost piece of a client stack, right on top of the
// maker: everything above it sees one service that stays ready across
// reconnects. Readiness is not timed (no layer times Ready), so a caller
// that will not wait for a slow connect gives its ctx a deadline; a timeout
// on the connect itself wraps the maker, as above (tower #648).
//
// Under a router or a balancer, one Reconnect per endpoint keeps a broken
// connection from failing the whole router, as it would fail tower's Steer
// (tower #625): a Reconnect's Ready fails only if its maker's does.
//
// Reconnect connects on a goroutine of its own, one connect at a time,
// shared by every caller who needs it; a caller whose ctx ends stops
// waiting, and the connect goes on for the next one. Close cancels a
// connect in progress and closes the current service; Shutdown(ctx) does
// the same, but waits for a maker that ignores its ctx only as long as
// ctx lasts, as net/http's Server.Shutdown does.
//
// # Logging
//
// A Reconnect writes no log by default. Given a *slog.Logger with
// [WithLogger], it logs each failed connect, each service it drops for
// failing its readiness, and its maker breaking for good.
//
// # Panics
//
// A panic in the maker, which runs on the connect goroutine, does not end
// the program: it becomes a [*tower.PanicError] that goes where the
// maker's error would. In the maker's Ready it breaks the Reconnect for
// good; in its Call it is a failed connect, reported by the Call of the
// waiting callers' permits as a *ConnectError that wraps it. A panic in
// the current service's Ready goes on up to the caller, and the service,
// which has failed its readiness, is replaced.
package reconnect
