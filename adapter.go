package tower

import (
	"context"
	"sync"

	"github.com/towergo/tower/internal/isnil"
)

// adapter is the service behind every combinator in this package: its
// permit wraps the inner permit and runs the combinator's call step with
// it. Req and Res are the types its callers see; InReq and InRes are the
// inner service's. A [WrapPool] cannot serve here, since it issues permits
// of the types it wraps, so the adapter keeps its own pool of records with
// a [Ticket] each, as a WrapPool does.
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
		if a.readyErr != nil && !isCtxErr(ctx, err) {
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

// isCtxErr reports whether err is ctx's own error: ctx has ended and err is
// the very value ctx.Err() returns.
func isCtxErr(ctx context.Context, err error) bool {
	cerr := ctx.Err()
	return cerr != nil && err == cerr
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
	if !rec.Redeem(token) {
		return
	}
	inner := rec.take()
	inner.Release()
}

// mustService and mustFunc panic, naming the function, if a combinator is
// given a nil service or a nil function.
func mustService[Req, Res any](fn string, inner Service[Req, Res]) {
	if isnil.Is(inner) {
		panic(fn + ": nil inner service")
	}
}

func mustFunc(fn string, isNil bool) {
	if isNil {
		panic(fn + ": nil f")
	}
}
