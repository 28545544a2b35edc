package tower

import "context"

// AndThen returns a service that, when a call of inner succeeds, passes its
// response to f and returns what f returns: tower's AndThen. f gets the
// call's ctx, so it may do more work under the request's deadline. When
// the call fails, f does not run and the error is returned unchanged, with
// the zero Res2; so is an error from Ready. Inner's reservation is given
// back when its call returns, before f runs.
func AndThen[Req, Res, Res2 any](inner Service[Req, Res], f func(ctx context.Context, res Res) (Res2, error)) Service[Req, Res2] {
	mustArgs("tower.AndThen", inner, f)
	return &adapter[Req, Res2, Req, Res]{
		inner: inner,
		call: func(ctx context.Context, p Permit[Req, Res], req Req) (Res2, error) {
			res, err := p.Call(ctx, req)
			if err != nil {
				var zero Res2
				return zero, err
			}
			return f(ctx, res)
		},
	}
}

// AndThenLayer returns a Layer that wraps each service in [AndThen] with f.
func AndThenLayer[Req, Res any](f func(ctx context.Context, res Res) (Res, error)) Layer[Req, Res] {
	return layerOf("tower.AndThenLayer", f, AndThen[Req, Res, Res])
}

// Then returns a service that passes the outcome of each call of inner,
// response and error, to f and returns what f returns: tower's Then. It is
// [MapResult] with the call's ctx, for an f that may do more work, such as
// a fallback request. An error from Ready is returned unchanged, not
// passed to f. Inner's reservation is given back when its call returns,
// before f runs.
func Then[Req, Res, Res2 any](inner Service[Req, Res], f func(ctx context.Context, res Res, err error) (Res2, error)) Service[Req, Res2] {
	mustArgs("tower.Then", inner, f)
	return &adapter[Req, Res2, Req, Res]{
		inner: inner,
		call: func(ctx context.Context, p Permit[Req, Res], req Req) (Res2, error) {
			res, err := p.Call(ctx, req)
			return f(ctx, res, err)
		},
	}
}

// ThenLayer returns a Layer that wraps each service in [Then] with f.
func ThenLayer[Req, Res any](f func(ctx context.Context, res Res, err error) (Res, error)) Layer[Req, Res] {
	return layerOf("tower.ThenLayer", f, Then[Req, Res, Res])
}
