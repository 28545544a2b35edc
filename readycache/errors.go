package readycache

import "reflect"

// Failed reports an endpoint that the cache removed because its Ready
// failed: tower's ready_cache::error::Failed. Its message is the
// endpoint's error's, as in tower. K is the key type.
type Failed[K comparable] struct {
	Key K     // the key the endpoint was under
	Err error // what its Ready returned
}

// Error returns the endpoint's error's message.
func (f *Failed[K]) Error() string { return f.Err.Error() }

// Unwrap returns the endpoint's error.
func (f *Failed[K]) Unwrap() error { return f.Err }

// isNil reports whether v is a nil interface, or holds a nil pointer, map,
// slice, channel or func: no service at all.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
