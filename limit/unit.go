package limit

import (
	"context"

	"github.com/towergo/tower"
)

// units is the tower.NotedWrapper a Bucket and a Rate share, a field so
// that its methods stay off their method sets: each permit holds one unit
// (a token, a place in a window), noted by the limit's own number, which
// giveBack returns if the permit is released unused. (Their Ready methods
// give it back themselves: a shared method would cost a call frame.)
type units[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	giveBack func(unit uint64)
	wraps    tower.WrapPool[Req, Res]
}

func (u *units[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

// ReleaseNoted gives the unit back even if inner's Release panics.
func (u *units[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], unit uint64) {
	defer u.giveBack(unit)
	inner.Release()
}
