// Package tower is the readiness contract for Go services, and the pieces
// that stack on it. Start with [Service] and [Call]; compose middleware
// with package stack's builder, stack.New, which has a method for each
// middleware of this module, or with [Stack].
//
// A [Service] answers a request in two phases. Ready(ctx) waits until the
// service can take one more request and reserves what that request needs
// (a concurrency permit, a queue slot, a place in a rate window) as a
// [Permit]; permit.Call(ctx, req) sends the request using that
// reservation. [Call] does both in one step. Waiting happens in Ready,
// before the caller has built or sent anything, so a full service stops
// its callers from producing work: backpressure, from the innermost
// service out. Where a layer sits decides what it measures: a timeout
// around a concurrency limit times only the call, because the wait for the
// limit's permit happens in Ready:
//
//	svc := stack.New[string, string]().
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
// # The contract
//
// Every Service in this module obeys these rules, and so must a Service
// that composes with them; package towertest's conformance suite checks
// them.
//
// Ready:
//
//   - Ready blocks until capacity for one request is reserved, and returns
//     a Permit that holds it. If ctx ends first, Ready returns ctx.Err()
//     unchanged and holds nothing.
//   - Capacity available without waiting is granted even when ctx is
//     already done, so Ready with a done context is a non-blocking "ready
//     now?" ([ReadyNow]), as load shedders and balancers ask it. A Service
//     must look for free capacity before it looks at ctx.
//   - Any other error from Ready means the service is broken for good and
//     will not become ready again (tower's rule). Callers stop using that
//     instance: report the error, drop the endpoint (as a balancer does),
//     or build a new service (as package reconnect does). Calling Ready
//     again is not a way to wait for it.
//
// Permits:
//
//   - A Permit is used exactly once: called or released. One that is
//     neither leaks what it holds, so defer p.Release() right after Ready;
//     Release after Call does nothing.
//   - A second Call panics with a message that starts "tower:".
//   - Copies of a Permit share one reservation: once one copy is called or
//     released, the others' Call panics and their Release does nothing. (A
//     service that reserves nothing, such as [ServiceFunc], cannot tell
//     copies apart; only the variable that was used is emptied.)
//   - A permit may be used on another goroutine than the one that got it.
//
// Concurrency: a Service is safe for concurrent use. Each caller holds its
// own Permit and shares the service, where Rust's tower clones the service
// per caller.
//
// Contexts:
//
//   - The ctx passed to Call carries the request's deadline, cancellation
//     and values down the stack: every layer passes it, or a context
//     derived from it, to the layer below. A layer that waits during Call
//     stops waiting when ctx ends.
//   - The ctx passed to Ready bounds only the wait for capacity. No layer
//     puts a time limit on Ready, since an error from Ready would break the
//     service for good. To bound a caller's whole wait, readiness included,
//     put a deadline on the caller's ctx; [Call] applies it to both phases.
//
// Panics:
//
//   - A panic in a service's Ready or Call, or in code a middleware runs
//     for a caller (a policy, a predicate, a picker), on the caller's own
//     goroutine goes on up to that caller, and every middleware it crosses
//     gives back what it reserved.
//   - A panic in such code on a goroutine a middleware started (a Buffer's
//     worker, an abandoned call, a hedge, a connect, a drive) never ends
//     the program: it reaches the callers it concerns as a [*PanicError].
//     A panic in an inner service's Ready is that service failing its
//     readiness, and breaks the middleware that saw it for good, as an
//     error would. A panic no caller is left to hear of (a call abandoned
//     at its deadline) is logged through log/slog's default logger.
//
// # Building stacks and services
//
// [Stack] and stack.New compose [Layer]s; in every list of layers in this
// module the first one is the outermost: it sees the request first.
// [MapRequest], [MapResponse], [MapErr], [MapResult], [AndThen] and [Then]
// change requests, responses or errors; [Either] and [OptionalLayer]
// choose a service or a layer when the stack is built.
//
// A leaf service that reserves nothing is a [ServiceFunc]. A middleware
// builds its permits one way: if they wrap the inner service's permit, as
// most do, it implements [Wrapper] (or [NotedWrapper], to keep a number
// with each permit, such as the window a place was taken in) and issues
// them from a [WrapPool], which makes them allocation-free and safe
// against stale copies. Only a permit that is not a wrapper (a queue
// slot, a semaphore's unit) needs a record of its own: it implements
// [Reserver], is issued with [NewPermit], and tells its owner from a stale
// copy with a [Ticket].
package tower
