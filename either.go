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
	return either("tower.Either", "service", useLeft, left, right)
}

// EitherLayer returns left if useLeft is true and right otherwise: the
// layer form of [Either]. It panics if left or right is nil, naming the
// nil one. For a layer that is present or absent, use [OptionalLayer].
func EitherLayer[Req, Res any](useLeft bool, left, right Layer[Req, Res]) Layer[Req, Res] {
	return either("tower.EitherLayer", "layer", useLeft, left, right)
}

func either[T any](fn, what string, useLeft bool, left, right T) T {
	if isnil.Is(left) {
		panic(fn + ": nil left " + what)
	}
	if isnil.Is(right) {
		panic(fn + ": nil right " + what)
	}
	if useLeft {
		return left
	}
	return right
}
