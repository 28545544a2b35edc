package tower

import "github.com/towergo/tower/internal/isnil"

// Either returns left if useLeft is true and right otherwise: tower's
// Either, a service that is one of two, chosen once, when the service is
// built. Both arms have the same Req and Res.
//
// In Rust, Either is how two services of different types become one type,
// so that a stack can hold either. In Go, a [Service] interface value
// already holds either, so Either adds no wrapper: it returns the chosen
// service itself, whose Ready, permits and errors are its own, at no cost
// per request. It exists for building a stack in one expression from
// configuration. To choose per request instead, use package steer.
//
// It panics if left or right is nil, naming the nil one, even if it is not
// the one chosen: a nil arm is a mistake in the code that builds the stack,
// whichever way the configuration goes.
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
// layer form of [Either], tower's Either as a Layer. The choice is made
// once, here; the returned layer is the chosen one itself.
//
// It panics if left or right is nil, naming the nil one. For a layer that
// is either present or absent, use [OptionalLayer].
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
