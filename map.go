package tower

import (
	"context"
	"fmt"
)

// MapRequest returns a service that applies f to each request and sends the
// result to inner: tower's MapRequest. Readiness, errors and responses are
// inner's; f runs in Call, on the caller's goroutine. Req is the request
// type of the returned service, InReq that of inner.
func MapRequest[Req, InReq, Res any](inner Service[InReq, Res], f func(Req) InReq) Service[Req, Res] {
	mustArgs("tower.MapRequest", inner, f)
	return &adapter[Req, Res, InReq, Res]{
		inner: inner,
		call: func(ctx context.Context, p Permit[InReq, Res], req Req) (Res, error) {
			defer p.Release() // if f panics; does nothing after Call
			return p.Call(ctx, f(req))
		},
	}
}

// MapRequestLayer returns a Layer that wraps each service in [MapRequest]
// with f.
func MapRequestLayer[Req, Res any](f func(Req) Req) Layer[Req, Res] {
	return layerOf("tower.MapRequestLayer", f, MapRequest[Req, Req, Res])
}

// MapResponse returns a service that applies f to each response of inner:
// tower's MapResponse. f runs only when the call succeeds; errors are
// returned unchanged, with the zero Res2.
func MapResponse[Req, Res, Res2 any](inner Service[Req, Res], f func(Res) Res2) Service[Req, Res2] {
	mustArgs("tower.MapResponse", inner, f)
	return AndThen(inner, func(_ context.Context, res Res) (Res2, error) { return f(res), nil })
}

// MapResponseLayer returns a Layer that wraps each service in [MapResponse]
// with f.
func MapResponseLayer[Req, Res any](f func(Res) Res) Layer[Req, Res] {
	return layerOf("tower.MapResponseLayer", f, MapResponse[Req, Res, Res])
}

// MapErr returns a service that applies f to every error of inner, from
// Ready as well as from Call: tower's MapErr. f is called only with a
// non-nil error and must return a non-nil one; MapErr panics in the
// request's goroutine if f returns nil (use [MapResult] to turn an error
// into a response). Responses pass through unchanged.
//
// The ctx.Err() that Ready returns when its ctx ends is never passed to f:
// the contract requires it unchanged. Any other Ready error goes through
// f, even if ctx has ended meanwhile, and so does every Call error, the
// call's ctx error included; a wrapping f (fmt.Errorf with %w) keeps
// errors.Is working.
func MapErr[Req, Res any](inner Service[Req, Res], f func(error) error) Service[Req, Res] {
	mustArgs("tower.MapErr", inner, f)
	mapped := func(err error) error {
		if e := f(err); e != nil {
			return e
		}
		panic(fmt.Sprintf("tower.MapErr: f returned nil for error %q; use MapResult to turn an error into a response", err))
	}
	return &adapter[Req, Res, Req, Res]{
		inner: inner,
		call: func(ctx context.Context, p Permit[Req, Res], req Req) (Res, error) {
			res, err := p.Call(ctx, req)
			if err != nil {
				return res, mapped(err)
			}
			return res, nil
		},
		readyErr: mapped,
	}
}

// MapErrLayer returns a Layer that wraps each service in [MapErr] with f.
func MapErrLayer[Req, Res any](f func(error) error) Layer[Req, Res] {
	return layerOf("tower.MapErrLayer", f, MapErr[Req, Res])
}

// MapResult returns a service that applies f to the outcome of each call
// of inner, response and error: tower's MapResult. f runs after every
// call, failed or not, and may turn an error into a response or back. An
// error from Ready is returned unchanged, not passed to f, as in tower;
// use [MapErr] to map it.
func MapResult[Req, Res, Res2 any](inner Service[Req, Res], f func(Res, error) (Res2, error)) Service[Req, Res2] {
	mustArgs("tower.MapResult", inner, f)
	return &adapter[Req, Res2, Req, Res]{
		inner: inner,
		call: func(ctx context.Context, p Permit[Req, Res], req Req) (Res2, error) {
			return f(p.Call(ctx, req))
		},
	}
}

// MapResultLayer returns a Layer that wraps each service in [MapResult]
// with f.
func MapResultLayer[Req, Res any](f func(Res, error) (Res, error)) Layer[Req, Res] {
	return layerOf("tower.MapResultLayer", f, MapResult[Req, Res, Res])
}
