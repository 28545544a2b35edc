// Package option checks the arguments of this module's constructors and
// applies their functional options, each in one way: a bad argument is a
// panic with a message that names the constructor, and options apply in
// order, a nil one being a panic that says its position.
package option

import "fmt"

// Apply applies opts, in order, to a zero O and returns it, or panics
// naming fn and the position of the first nil option.
func Apply[O any, F ~func(*O)](fn string, opts []F) O {
	var o O
	Onto(fn, &o, opts)
	return o
}

// Onto is Apply onto an O that holds the defaults already.
func Onto[O any, F ~func(*O)](fn string, o *O, opts []F) {
	for i, opt := range opts {
		if opt == nil {
			panic(fmt.Sprintf("%s: option %d is nil", fn, i))
		}
		opt(o)
	}
}

// PanicIf panics with the message format and args make if bad is true: the
// one way a constructor rejects an argument. args are boxed whether or not
// bad is, an allocation each that is not a constant: keep it off the paths
// a request takes, where an if costs nothing.
func PanicIf(bad bool, format string, args ...any) {
	if bad {
		panic(fmt.Sprintf(format, args...))
	}
}
