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
	plain, noted sync.Pool // of *plainRecord and *notedRecord
}

// plainRecord is the record behind a permit issued by Wrap. It keeps w when
// pooled: the Wrapper lives as long as the middleware.
type plainRecord[Req, Res any] struct {
	Ticket
	w     Wrapper[Req, Res]
	inner Permit[Req, Res]
	pool  *sync.Pool
}

// notedRecord is the record behind a permit issued by WrapNoted.
type notedRecord[Req, Res any] struct {
	Ticket
	w     NotedWrapper[Req, Res]
	note  uint64
	inner Permit[Req, Res]
	pool  *sync.Pool
}

// Wrap returns a permit that, when called, runs w.CallWrapped with inner,
// and when released, runs w.ReleaseWrapped with inner.
func (wp *WrapPool[Req, Res]) Wrap(w Wrapper[Req, Res], inner Permit[Req, Res]) Permit[Req, Res] {
	rec, _ := wp.plain.Get().(*plainRecord[Req, Res])
	if rec == nil {
		rec = &plainRecord[Req, Res]{pool: &wp.plain}
	}
	rec.w, rec.inner = w, inner
	return Permit[Req, Res]{r: rec, token: rec.Token()}
}

// WrapNoted returns a permit that, when called, runs w.CallNoted with
// inner and note, and when released, runs w.ReleaseNoted with them.
func (wp *WrapPool[Req, Res]) WrapNoted(w NotedWrapper[Req, Res], inner Permit[Req, Res], note uint64) Permit[Req, Res] {
	rec, _ := wp.noted.Get().(*notedRecord[Req, Res])
	if rec == nil {
		rec = &notedRecord[Req, Res]{pool: &wp.noted}
	}
	rec.w, rec.inner, rec.note = w, inner, note
	return Permit[Req, Res]{r: rec, token: rec.Token()}
}

// take moves the inner permit out of the redeemed record and pools the
// record, before any code of the wrapper's runs.
func (rec *plainRecord[Req, Res]) take() Permit[Req, Res] {
	inner := rec.inner
	rec.inner = Permit[Req, Res]{}
	rec.pool.Put(rec)
	return inner
}

func (rec *plainRecord[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	rec.MustRedeem(token)
	w := rec.w
	return w.CallWrapped(ctx, rec.take(), req)
}

func (rec *plainRecord[Req, Res]) ReleaseReserved(token uint64) {
	if rec.Redeem(token) {
		w := rec.w
		w.ReleaseWrapped(rec.take())
	}
}

// take is plainRecord's take, with the note.
func (rec *notedRecord[Req, Res]) take() (Permit[Req, Res], uint64) {
	inner, note := rec.inner, rec.note
	rec.inner = Permit[Req, Res]{}
	rec.pool.Put(rec)
	return inner, note
}

func (rec *notedRecord[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	rec.MustRedeem(token)
	w := rec.w
	inner, note := rec.take()
	return w.CallNoted(ctx, inner, note, req)
}

func (rec *notedRecord[Req, Res]) ReleaseReserved(token uint64) {
	if rec.Redeem(token) {
		w := rec.w
		inner, note := rec.take()
		w.ReleaseNoted(inner, note)
	}
}
