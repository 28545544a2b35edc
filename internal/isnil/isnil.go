// Package isnil lets a constructor reject a typed nil: a nil pointer passed
// as a tower.Service is not == nil, and would fail later, at the first
// request, with a nil dereference far from the mistake.
package isnil

import "reflect"

// Is reports whether v is a nil interface, or holds a nil pointer,
// channel, func or unsafe pointer. A nil slice or map is a value whose
// methods may work (tower.Stack of no layers is a nil slice).
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
