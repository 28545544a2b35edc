package tower

import (
	"context"
	"sync"
)

// A Wrapper is a middleware whose permits wrap the permit of the service
// inside it. A [WrapPool] issues its permits and calls back here, once per
// permit, with the inner permit, which the Wrapper must then use or give
// back.
type Wrapper[Req, Res any] interface {
	// CallWrapped serves req for a permit that wrapped inner. It must call
	// or release inner exactly once before it returns, or hand it to a
	// goroutine that will.
	CallWrapped(ctx context.Context, inner Permit[Req, Res], req Req) (Res, error)
	// ReleaseWrapped gives back what the middleware reserved for a permit
	// released unused, and must release inner.
	ReleaseWrapped(inner Permit[Req, Res])
}

// A NotedWrapper is a [Wrapper] that keeps a number with each permit (the
// window a place was taken in, the instant a token was taken at). A
// [WrapPool] keeps it in the permit's record, so the middleware needs no
// record of its own, and hands it back when the permit is used.
type NotedWrapper[Req, Res any] interface {
	// CallNoted is CallWrapped for a permit issued with note.
	CallNoted(ctx context.Context, inner Permit[Req, Res], note uint64, req Req) (Res, error)
	// ReleaseNoted is ReleaseWrapped for a permit issued with note.
	ReleaseNoted(inner Permit[Req, Res], note uint64)
}

// A WrapPool issues permits that wrap an inner permit, for a [Wrapper] or a
// [NotedWrapper]. Each outstanding permit uses a pooled record, so issuing
// one does not allocate once the pool is warm, and a [Ticket] in each
// record keeps a stale copy from reaching a reused record.
//
// The zero WrapPool is ready to use. A WrapPool is safe for concurrent use
// and must not be copied after first use; embed one in the middleware.
type WrapPool[Req, Res any] struct {
	pool sync.Pool
}

// wrapped is the record behind a permit issued by a WrapPool.
type wrapped[Req, Res any] struct {
	Ticket
	w     Wrapper[Req, Res]      // nil for a noted permit
	nw    NotedWrapper[Req, Res] // nil for a plain one
	note  uint64
	inner Permit[Req, Res]
	pool  *WrapPool[Req, Res]
}

// Wrap returns a permit that, when called, runs w.CallWrapped with inner,
// and when released, runs w.ReleaseWrapped with inner.
func (wp *WrapPool[Req, Res]) Wrap(w Wrapper[Req, Res], inner Permit[Req, Res]) Permit[Req, Res] {
	rec := wp.record()
	rec.w, rec.inner = w, inner
	return Permit[Req, Res]{r: rec, token: rec.Token()}
}

// WrapNoted returns a permit that, when called, runs w.CallNoted with
// inner and note, and when released, runs w.ReleaseNoted with them.
func (wp *WrapPool[Req, Res]) WrapNoted(w NotedWrapper[Req, Res], inner Permit[Req, Res], note uint64) Permit[Req, Res] {
	rec := wp.record()
	rec.nw, rec.inner, rec.note = w, inner, note
	return Permit[Req, Res]{r: rec, token: rec.Token()}
}

func (wp *WrapPool[Req, Res]) record() *wrapped[Req, Res] {
	rec, _ := wp.pool.Get().(*wrapped[Req, Res])
	if rec == nil {
		rec = &wrapped[Req, Res]{pool: wp}
	}
	return rec
}

// take empties a redeemed record and pools it before any middleware code
// runs, so nothing that outlives the call can reach it.
func (rec *wrapped[Req, Res]) take() (Wrapper[Req, Res], NotedWrapper[Req, Res], uint64, Permit[Req, Res]) {
	w, nw, note, inner := rec.w, rec.nw, rec.note, rec.inner
	rec.w, rec.nw, rec.note, rec.inner = nil, nil, 0, Permit[Req, Res]{}
	rec.pool.pool.Put(rec)
	return w, nw, note, inner
}

func (rec *wrapped[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	rec.MustRedeem(token)
	w, nw, note, inner := rec.take()
	if nw != nil {
		return nw.CallNoted(ctx, inner, note, req)
	}
	return w.CallWrapped(ctx, inner, req)
}

func (rec *wrapped[Req, Res]) ReleaseReserved(token uint64) {
	if !rec.Redeem(token) {
		return
	}
	w, nw, note, inner := rec.take()
	if nw != nil {
		nw.ReleaseNoted(inner, note)
		return
	}
	w.ReleaseWrapped(inner)
}
