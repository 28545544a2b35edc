// Package spawnready waits for a service's readiness on a goroutine of its
// own, so that the wait is not lost when the caller stops waiting: tower's
// SpawnReady.
//
// In tower, a service's readiness makes progress only while someone polls
// it; SpawnReady moves a pending readiness check into a spawned task, which
// drives it to the end. In Go, Ready blocks, and a caller that stops
// waiting (its ctx ends, or it only asked "ready now?" with a done ctx)
// abandons whatever the inner service's Ready was doing for it: a
// handshake, a warm-up, its place in a concurrency limit's queue. A
// [SpawnReady] keeps that work going in a background drive and holds the
// resulting permit for the next caller:
//
//	sr := spawnready.New(conn) // conn's Ready does a slow handshake
//	defer sr.Close()           // stops the drive, releases what it holds
//	svc := loadshed.New[Req, Res](sr)
//
// Here LoadShed asks "ready now?" and sheds while the handshake runs, but
// its first question starts the handshake, and once it is done requests go
// through. Without SpawnReady, each of LoadShed's questions would start the
// handshake with a done ctx, and it would never finish.
//
// # Where it sits
//
// SpawnReady sits right outside the service whose readiness is slow, and
// inside whatever asks that service "ready now?" (LoadShed, a balancer) or
// waits for it with short deadlines. It does not change a service that is
// ready now: Ready asks the inner service directly first, and only starts a
// drive when the answer is no.
//
// A permit the drive got while nobody was waiting is held for the next
// caller, and holds the inner service's capacity meanwhile: with a
// ConcurrencyLimit(1) inside, a drive holding a permit is the one request
// in flight, although no request was sent. Close, or [Layer.Close] for
// every SpawnReady a layer made, stops a drive and releases its permit.
// Close waits for the drive's goroutine, so an inner service whose Ready
// ignores its ctx holds Close up; Shutdown(ctx) waits only as long as ctx
// lasts, as net/http's Server.Shutdown does.
//
// # Logging
//
// A SpawnReady writes no log by default. Given a *slog.Logger with
// [WithLogger], it logs, once, the failure of the inner service's Ready
// that makes it fail every Ready.
//
// # Panics
//
// A panic in the inner service's Ready is that service failing its
// readiness, on whichever goroutine it happens: the SpawnReady fails for
// good with a [*tower.PanicError], which the callers waiting for a drive,
// and every later caller, get from Ready. A panic on a drive does not end
// the program. One on a caller's own goroutine, when Ready asks the inner
// service directly, goes on up to that caller once the SpawnReady has
// failed.
package spawnready
