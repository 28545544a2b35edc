// Package spawnready waits for a service's readiness on a goroutine of its
// own, so that the wait is not lost when the caller stops waiting: tower's
// SpawnReady. Wrap the slow service with [New], or stack a [Layer], and
// close it when done:
//
//	sr := spawnready.New(conn) // conn's Ready does a slow handshake
//	defer sr.Close()           // stops the drive, releases what it holds
//	svc := loadshed.New[Req, Res](sr)
//
// A caller that stops waiting in Ready (its ctx ends, or it only asked
// "ready now?" with a done ctx) abandons whatever the inner service's
// Ready was doing for it: a handshake, a place in a queue. A [SpawnReady]
// keeps that going on a background drive and holds the resulting permit
// for the next caller. Put it right outside the service whose readiness is
// slow, and inside whatever asks it "ready now?" (LoadShed, a balancer) or
// waits with short deadlines. A permit the drive holds for the next caller
// holds the inner service's capacity.
//
// A runtime cleanup stops the drive of a SpawnReady that becomes
// unreachable unclosed, and logs a warning; it runs outside every
// testing/synctest bubble, where that is fatal, so a test must close what
// it makes.
//
// If the inner service's Ready fails, the SpawnReady fails for good: every
// Ready returns that error. A panic or runtime.Goexit in the inner
// service's Ready is such a failure, with a [*tower.PanicError]: on a
// drive it is recovered; on a caller's own goroutine it goes on up to that
// caller once the SpawnReady has failed.
package spawnready
