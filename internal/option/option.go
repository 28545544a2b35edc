// Package option applies the functional options of this module's
// constructors, all in one way: in order, and with a panic that names the
// constructor and the position of a nil option.
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
