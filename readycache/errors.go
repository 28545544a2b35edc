package readycache

// Failed reports, to [WithFailureHandler], an endpoint that the cache
// removed because its Ready failed: tower's ready_cache::error::Failed,
// with the endpoint's error's message. K is the key type.
type Failed[K comparable] struct {
	Key K     // the key the endpoint was under
	Err error // what its Ready returned, or the PanicError of its panic
}

// Error returns the endpoint's error's message.
func (f *Failed[K]) Error() string { return f.Err.Error() }

// Unwrap returns the endpoint's error.
func (f *Failed[K]) Unwrap() error { return f.Err }
