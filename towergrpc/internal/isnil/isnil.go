// Package isnil tells a constructor that a value it was given is no value
// at all, even when it comes in an interface with a type: a typed nil
// pointer passed as a tower.Service is not == nil, and would fail later,
// at the first request, with a nil dereference far from the mistake.
//
// It is a copy of the core module's internal/isnil: a module imports no
// other module's internal packages, which may change in any release.
package isnil

import "reflect"

// Is reports whether v is a nil interface, or holds a nil pointer,
// channel, func or unsafe pointer. A nil slice or map is a value: reading
// it works, and a type built on one can have methods that do (tower.Stack
// of no layers is a nil slice that wraps a service in nothing).
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
