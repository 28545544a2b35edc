package limit

import (
	"context"

	"github.com/towergo/tower"
)

// units is what a Bucket and a Rate share: each of their permits holds one
// unit (a token, a place in a window), noted by the limit's own number,
// that giveBack returns if the permit is released unused or the inner
// Ready fails or panics. It is the limits' tower.NotedWrapper, a field
// rather than embedded so that its methods stay off their method sets.
type units[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	giveBack func(unit uint64)
	wraps    tower.WrapPool[Req, Res]
}

// ready waits for the inner service on behalf of a caller that holds unit.
func (u *units[Req, Res]) ready(ctx context.Context, unit uint64) (tower.Permit[Req, Res], error) {
	held := true
	defer func() {
		if held {
			u.giveBack(unit)
		}
	}()
	inner, err := u.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	return u.wraps.WrapNoted(u, inner, unit), nil
}

// CallNoted sends req: the permit's unit is used.
func (u *units[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

// ReleaseNoted releases inner and gives the unit back, even if inner's
// Release panics.
func (u *units[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], unit uint64) {
	defer u.giveBack(unit)
	inner.Release()
}
