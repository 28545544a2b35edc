// Package option applies the functional options of this module's
// constructors. It is a copy of the core module's internal/option, which a
// module cannot import.
package option

import "fmt"

// Onto applies opts, in order, to o, which holds the defaults already,
// or panics naming fn and the position of the first nil option.
func Onto[O any, F ~func(*O)](fn string, o *O, opts []F) {
	for i, opt := range opts {
		if opt == nil {
			panic(fmt.Sprintf("%s: option %d is nil", fn, i))
		}
		opt(o)
	}
}
