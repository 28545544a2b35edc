package tower

import (
	"context"
	"sync"

	"github.com/towergo/tower/internal/isnil"
)

// adapter is the service behind every combinator in this package: its
// permit wraps the inner permit and runs the combinator's call step with
// it. Req and Res are the types its callers see; InReq and InRes are the
// inner service's. A [WrapPool] issues permits only of the types it wraps,
// so the adapter pools its own records, with a [Ticket] each.
type adapter[Req, Res, InReq, InRes any] struct {
	inner Service[InReq, InRes]
	// call serves a request with the inner permit. It must call or release
	// inner exactly once.
	call func(ctx context.Context, inner Permit[InReq, InRes], req Req) (Res, error)
	// readyErr, if set, maps an error from the inner service's Ready that is
	// not the error of Ready's ctx.
	readyErr func(error) error
	records  sync.Pool
}

// adapted is the record behind one permit issued by an adapter.
type adapted[Req, Res, InReq, InRes any] struct {
	Ticket
	a     *adapter[Req, Res, InReq, InRes]
	inner Permit[InReq, InRes]
}

// Ready waits for the inner service and wraps its permit. ctx.Err() is
// returned unchanged even when the adapter maps readiness errors, so the
// caller can tell "gave up" from "broken".
func (a *adapter[Req, Res, InReq, InRes]) Ready(ctx context.Context) (Permit[Req, Res], error) {
	p, err := a.inner.Ready(ctx)
	if err != nil {
		if a.readyErr != nil && err != ctx.Err() {
			err = a.readyErr(err)
		}
		return Permit[Req, Res]{}, err
	}
	rec, _ := a.records.Get().(*adapted[Req, Res, InReq, InRes])
	if rec == nil {
		rec = &adapted[Req, Res, InReq, InRes]{a: a}
	}
	rec.inner = p
	return NewPermit[Req, Res](rec, rec.Token()), nil
}

// take moves the inner permit out of a redeemed record and pools the
// record before any combinator code runs, so nothing that outlives the
// call can reach it.
func (rec *adapted[Req, Res, InReq, InRes]) take() Permit[InReq, InRes] {
	inner := rec.inner
	rec.inner = Permit[InReq, InRes]{}
	rec.a.records.Put(rec)
	return inner
}

func (rec *adapted[Req, Res, InReq, InRes]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	rec.MustRedeem(token)
	a := rec.a // never changes; read before the record is reused
	return a.call(ctx, rec.take(), req)
}

func (rec *adapted[Req, Res, InReq, InRes]) ReleaseReserved(token uint64) {
	if rec.Redeem(token) {
		inner := rec.take()
		inner.Release()
	}
}

// mustArgs panics, naming the combinator fn, if it is given a nil inner
// service or a nil f.
func mustArgs(fn string, inner, f any) {
	if isnil.Is(inner) {
		panic(fn + ": nil inner service")
	}
	if isnil.Is(f) {
		panic(fn + ": nil f")
	}
}

// layerOf returns a Layer that wraps each service with wrap(inner, f), for
// the layer form fn of a combinator. It panics, naming fn, if f is nil.
func layerOf[Req, Res, F any](fn string, f F, wrap func(Service[Req, Res], F) Service[Req, Res]) Layer[Req, Res] {
	if isnil.Is(f) {
		panic(fn + ": nil f")
	}
	return LayerFunc[Req, Res](func(inner Service[Req, Res]) Service[Req, Res] { return wrap(inner, f) })
}
