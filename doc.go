// Package tower is the readiness contract for Go services, and the pieces
// that stack on it. Start with [Service] and [Call]; compose middleware
// with package stack's builder, stack.New, which has a method for each
// middleware of this module, or with [Stack].
//
// A [Service] answers a request in two phases. Ready(ctx) waits until the
// service can take one more request and reserves what that request needs
// (a concurrency permit, a queue slot, a place in a rate window) as a
// [Permit]; permit.Call(ctx, req) sends the request under that
// reservation; [Call] does both. Waiting happens in Ready, before the
// caller has built or sent anything, so a full service holds its callers
// back: backpressure, from the innermost service out. So where a layer
// sits decides what it measures: a timeout around a concurrency limit
// times only the call, not the wait for the limit's permit:
//
//	svc := stack.New[string, string]().
//		Timeout(150 * time.Millisecond).
//		ConcurrencyLimit(1).
//		Service(handler)
//
//	p, err := svc.Ready(ctx) // waits here for the permit, untimed
//	if err != nil {
//		return err
//	}
//	defer p.Release() // gives the permit back if Call never runs
//	rsp, err := p.Call(ctx, "hello") // the 150ms clock starts here
//
// # The contract
//
// Every Service in this module obeys these rules, and so must a Service
// that composes with them; package towertest's conformance suite checks
// them.
//
//   - Ready blocks until capacity for one request is reserved, and returns
//     a Permit that holds it. If ctx ends first, Ready returns ctx.Err()
//     unchanged and holds nothing. But capacity free without waiting is
//     granted even to a done ctx (a Service looks for it before it looks
//     at ctx), so Ready with a done ctx asks "ready now?" ([ReadyNow]).
//   - Any other error from Ready means the service is broken for good
//     (tower's rule): callers stop using it, and report the error, drop
//     the endpoint (a balancer) or build a new service (package
//     reconnect); calling Ready again is no way to wait.
//   - A Permit is used exactly once: called or released. One that is
//     neither leaks what it holds, so defer p.Release() right after Ready;
//     Release after Call does nothing, and a second Call panics with a
//     message that starts "tower:". Copies of a Permit share one
//     reservation: once one is used, the others' Call panics and their
//     Release does nothing (a service that reserves nothing, such as
//     [ServiceFunc], cannot tell copies apart). A Permit may be used on
//     another goroutine than the one that got it.
//   - A Service is safe for concurrent use: each caller holds its own
//     Permit and shares the service, where Rust's tower clones it.
//   - The ctx passed to Call carries the request's deadline, cancellation
//     and values down the stack: every layer passes it, or a context
//     derived from it, to the layer below, and a layer that waits during
//     Call stops when it ends. The ctx passed to Ready bounds only the wait
//     for capacity: no layer times Ready, since an error from it would
//     break the service. To bound a caller's whole wait, put a deadline on
//     its ctx: [Call] applies it to both phases.
//   - A panic in a service's Ready or Call, or in code a middleware runs
//     for a caller (a policy, a predicate, a picker), on the caller's
//     goroutine goes on up to that caller, and every middleware it crosses
//     gives back what it reserved. On a goroutine a middleware started (a
//     Buffer's worker, an abandoned call, a hedge, a connect), a panic
//     never ends the program: it reaches the callers it concerns as a
//     [*PanicError], or is logged through log/slog's default logger if
//     none is left. A panic in an inner Ready breaks the middleware that
//     saw it for good, as an error would.
//
// # Building stacks and services
//
// In every list of layers in this module, [Stack]'s and stack.New's
// included, the first is the outermost: it sees the request first.
// [MapRequest], [MapResponse], [MapErr], [MapResult], [AndThen] and [Then]
// change requests, responses or errors: each returns a service that is
// safe for concurrent use if its f is, panics if inner or f is nil, and
// has a layer form ([MapErrLayer] and so on) for an f that keeps the
// types. [Either] and [OptionalLayer] choose a service or a layer when the
// stack is built.
//
// A leaf service that reserves nothing is a [ServiceFunc]. A middleware
// whose permits wrap the inner service's permit implements [Wrapper] (or
// [NotedWrapper], to keep a number with each permit) and issues them from
// a [WrapPool], which makes them allocation-free and safe against stale
// copies. A permit that wraps none (a queue slot, a semaphore's unit) is
// issued with [NewPermit] and served by a [Reserver], which tells it from
// a stale copy with a [Ticket].
package tower
