package hedge

// A Policy says which requests may be hedged, that is sent twice: only
// idempotent ones should be. It must be safe for concurrent use.
type Policy[Req any] interface {
	// Clone returns a copy of req for the hedge, or false if it is never
	// to be hedged. It is called before the original is sent, since sending
	// may use the request up.
	Clone(req Req) (clone Req, ok bool)
	// CanRetry reports whether the hedge, the copy Clone made, may still
	// be sent, once the delay has passed; if not, the original alone answers.
	CanRetry(clone Req) bool
}

// Idempotent is a [Policy] that hedges every request, unchanged. Its zero
// value is ready to use.
type Idempotent[Req any] struct{}

// Clone returns req and true.
func (Idempotent[Req]) Clone(req Req) (Req, bool) { return req, true }

// CanRetry returns true.
func (Idempotent[Req]) CanRetry(Req) bool { return true }
