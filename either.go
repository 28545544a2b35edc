package tower

import "github.com/towergo/tower/internal/isnil"

// Either returns left if useLeft is true and right otherwise: tower's
// Either, chosen once, when the stack is built from configuration. A Go
// interface value already holds either type, so Either adds no wrapper and
// costs nothing per request. To choose per request, use package steer.
//
// It panics if left or right is nil, naming the nil one, even if it is not
// the one chosen: a nil arm is a bug whichever way the configuration goes.
func Either[Req, Res any](useLeft bool, left, right Service[Req, Res]) Service[Req, Res] {
	if isnil.Is(left) {
		panic("tower.Either: nil left service")
	}
	if isnil.Is(right) {
		panic("tower.Either: nil right service")
	}
	if useLeft {
		return left
	}
	return right
}

// EitherLayer returns left if useLeft is true and right otherwise: the
// layer form of [Either]. It panics if left or right is nil, naming the
// nil one. For a layer that is present or absent, use [OptionalLayer].
func EitherLayer[Req, Res any](useLeft bool, left, right Layer[Req, Res]) Layer[Req, Res] {
	if isnil.Is(left) {
		panic("tower.EitherLayer: nil left layer")
	}
	if isnil.Is(right) {
		panic("tower.EitherLayer: nil right layer")
	}
	if useLeft {
		return left
	}
	return right
}
