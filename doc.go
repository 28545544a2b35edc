// Package tower is the readiness contract for Go services, and the pieces
// that stack on it.
//
// A [Service] answers a request in two phases:
//
//  1. Readiness. Ready(ctx) waits until the service can take one more
//     request and reserves what that request needs: a concurrency permit, a
//     queue slot, a place in a rate window. It returns the reservation as a
//     [Permit].
//  2. Call. permit.Call(ctx, req) hands the request over and returns the
//     response, using what Ready reserved.
//
// Waiting happens in Ready, before the caller has built or sent anything. A
// full service makes its callers wait there, and they stop producing work:
// that is backpressure, travelling from the innermost service out to the
// caller. Middleware wraps a service and acts on one phase or both; where a
// layer sits decides what it measures. A timeout that wraps a concurrency
// limit times only the call, because the wait for the limit's permit happens
// in Ready:
//
//	svc := tower.NewBuilder[string, string]().
//		Layer(timeout.NewLayer[string, string](150 * time.Millisecond)).
//		Layer(limit.NewConcurrencyLayer[string, string](1)).
//		Service(handler)
//
//	p, err := svc.Ready(ctx) // waits here for the permit, untimed
//	if err != nil {
//		return err
//	}
//	defer p.Release() // gives the permit back if Call never runs
//	rsp, err := p.Call(ctx, "hello") // the 150ms clock starts here
//
// [Call] does both phases in one step.
//
// # The contract
//
// Every Service in this module obeys the rules below, and so must a Service
// that wants to compose with them. The conformance suite in package towertest
// checks them.
//
// Ready:
//
//   - Ready blocks until capacity for one request is reserved, and returns a
//     Permit that holds it. If ctx ends first, Ready returns ctx.Err()
//     unchanged and holds nothing.
//   - Capacity that is available without waiting is granted even when ctx is
//     already done. Ready with a done context is therefore a non-blocking
//     "ready now?" question; [ReadyNow] asks it. This is how a load shedder
//     or a balancer probes a service without a second method, so a Service
//     must look for free capacity before it looks at ctx.
//   - An error from Ready that is not ctx.Err() means the service is broken
//     for good: it will not become ready again (tower's rule). Callers must
//     stop using that instance: report the error, drop the endpoint (a
//     balancer does), or build a new service (a reconnecting layer does).
//     Calling Ready again on a broken service is not a way to wait for it.
//
// Permits:
//
//   - A Permit is used exactly once: it is either called or released. A
//     permit that is neither leaks what it holds, so the idiom is
//     defer p.Release() right after Ready: Release after Call does nothing.
//   - A second Call panics with a message that starts "tower:".
//   - Copies of a Permit share one reservation. Once one copy has been called
//     or released, the others are stale: their Call panics and their Release
//     does nothing. (A service that reserves nothing, such as [ServiceFunc],
//     cannot tell copies apart; only the variable that was used is emptied.)
//   - A permit may be used on another goroutine than the one that got it.
//
// Concurrency:
//
//   - A Service is safe for concurrent use by any number of goroutines. Each
//     caller holds its own Permit; where Rust's tower clones a service per
//     caller so that each clone can hold one reservation, a Go caller holds
//     a reservation and shares the service.
//
// Call:
//
//   - The ctx passed to Call carries the request's deadline, cancellation and
//     values down the stack: every layer passes it, or a context derived from
//     it, to the layer below. A layer that waits during Call stops waiting
//     when ctx ends.
//   - The ctx passed to Ready bounds only the wait for capacity. No layer
//     puts a time limit on Ready: an error from Ready would break the service
//     for good. To bound a caller's whole wait, readiness included, give the
//     caller's ctx a deadline, as [Call] does with whatever deadline its ctx
//     carries.
//
// Panics:
//
//   - A panic in a service's Ready or Call, or in any code a middleware
//     runs for a caller (a policy, a predicate, a picker), goes on up to
//     that caller when it happens on the caller's own goroutine, as any
//     panic does, and every middleware it crosses gives back what it
//     reserved on the way.
//   - A panic in such code on a goroutine a middleware started (a Buffer's
//     worker, an abandoned call, a hedge, a connect, a drive) never ends
//     the program: it reaches the callers it concerns as a [*PanicError],
//     which carries the panic value and the stack. A panic in an inner
//     service's Ready is that service failing its readiness, and breaks
//     the middleware that saw it for good, as an error would. A panic that
//     no caller is left to hear of (a call abandoned at its deadline) is
//     logged through log/slog's default logger.
//
// # Layers and stacking
//
// A [Layer] wraps a service in middleware. [Stack] and [Builder] compose
// layers; in every list of layers in this module the first one is the
// outermost: it sees the request first.
//
// # Combinators
//
// Small steps that change requests, responses or errors are functions of
// this package: [MapRequest], [MapResponse], [MapErr], [MapResult],
// [AndThen] and [Then], each with a Layer form for steps that keep the
// types, and [Either] and [OptionalLayer] to choose a service or a layer
// when the stack is built. A step that changes Req or Res is a generic
// function rather than a method, because Go methods cannot have type
// parameters.
//
// # Implementing a Service
//
// A leaf service that reserves nothing is a [ServiceFunc]. A middleware whose
// permits wrap the inner service's permit implements [Wrapper] (or
// [NotedWrapper], to keep a number with each permit) and hands out permits
// with a [WrapPool], which makes them allocation-free and safe against
// stale copies. Anything else implements [Reserver] and builds its
// permits with [NewPermit], using a [Ticket] to tell a permit's owner from a
// stale copy.
package tower
