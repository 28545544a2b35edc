// Package isnil tells a constructor that a value it was given is nil even
// when it comes in an interface with a type: a typed nil pointer passed as
// a tower.Service is not == nil, and would fail at the first request, far
// from the mistake.
//
// It is a copy of the core module's internal/isnil, which may change
// between the core's releases: this module must build against the next.
package isnil

import "reflect"

// Is reports whether v is a nil interface, or holds a nil pointer,
// channel, func or unsafe pointer. A nil slice or map is a value (a
// tower.Stack of no layers is a nil slice).
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
