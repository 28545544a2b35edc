// Package isnil tells a constructor that a value it was given is no value
// at all, even when it comes in an interface with a type: a typed nil
// pointer passed as a tower.Service is not == nil, and would fail later,
// at the first request, with a nil dereference far from the mistake.
package isnil

import "reflect"

// Is reports whether v is a nil interface, or holds a nil pointer, map,
// slice, channel, func or unsafe pointer.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
