package limit

import (
	"context"

	"github.com/towergo/tower"
)

// units is the tower.NotedWrapper a Bucket and a Rate share: each of their
// permits holds one unit (a token, a place in a window), noted by the
// limit's own number, which giveBack returns if the permit is released
// unused. (If the inner Ready fails or panics, their Ready methods give it
// back themselves: a shared method would cost the fast path a call frame.)
// It is a field rather than embedded, so that its methods stay off their
// method sets.
type units[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	giveBack func(unit uint64)
	wraps    tower.WrapPool[Req, Res]
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
