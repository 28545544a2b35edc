package tower

import (
	"context"
	"sync"
)

// A Wrapper is a middleware whose permits wrap the permit of the service
// inside it: Timeout and ConcurrencyLimit are Wrappers. A [WrapPool] turns
// the inner permit into the middleware's own, and calls back here when that
// permit is used.
type Wrapper[Req, Res any] interface {
	// CallWrapped serves req for a permit that wrapped inner. It must call
	// or release inner exactly once before it returns, or hand it to a
	// goroutine that will.
	CallWrapped(ctx context.Context, inner Permit[Req, Res], req Req) (Res, error)
	// ReleaseWrapped gives back what the middleware reserved for a permit
	// released unused, and must release inner.
	ReleaseWrapped(inner Permit[Req, Res])
}

// A WrapPool issues permits that wrap an inner permit, for a [Wrapper]. Each
// outstanding permit uses a small record from a pool, so issuing one does not
// allocate once the pool is warm, and a [Ticket] in each record refuses stale
// copies, so a record that went back to the pool cannot be reached through an
// old permit.
//
// The zero WrapPool is ready to use. A WrapPool is safe for concurrent use
// and must not be copied after first use; embed one in the middleware.
type WrapPool[Req, Res any] struct {
	pool sync.Pool
}

// wrapped is the record behind a permit issued by a WrapPool.
type wrapped[Req, Res any] struct {
	Ticket
	w     Wrapper[Req, Res]
	inner Permit[Req, Res]
	pool  *WrapPool[Req, Res]
}

// Wrap returns a permit that, when called, runs w.CallWrapped with inner,
// and when released, runs w.ReleaseWrapped with inner.
func (wp *WrapPool[Req, Res]) Wrap(w Wrapper[Req, Res], inner Permit[Req, Res]) Permit[Req, Res] {
	rec, _ := wp.pool.Get().(*wrapped[Req, Res])
	if rec == nil {
		rec = &wrapped[Req, Res]{pool: wp}
	}
	rec.w, rec.inner = w, inner
	return Permit[Req, Res]{r: rec, token: rec.Token()}
}

// take consumes the record for a redeemed token: it moves the wrapper and
// the inner permit out and returns the record to its pool before any
// middleware code runs, so nothing that outlives the call can reach it.
func (rec *wrapped[Req, Res]) take() (Wrapper[Req, Res], Permit[Req, Res]) {
	w, inner := rec.w, rec.inner
	rec.w, rec.inner = nil, Permit[Req, Res]{}
	rec.pool.pool.Put(rec)
	return w, inner
}

func (rec *wrapped[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	rec.MustRedeem(token)
	w, inner := rec.take()
	return w.CallWrapped(ctx, inner, req)
}

func (rec *wrapped[Req, Res]) ReleaseReserved(token uint64) {
	if !rec.Redeem(token) {
		return
	}
	w, inner := rec.take()
	w.ReleaseWrapped(inner)
}
