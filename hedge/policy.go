package hedge

// A Policy says which requests may be hedged: tower's hedge Policy.
// Hedging sends a request twice, so only requests that are safe to send
// twice (idempotent ones) should be; the policy is where that is decided.
//
// A Policy is shared by every request through the Hedge, on many
// goroutines at once, so it must be safe for concurrent use. Req is the
// request type.
type Policy[Req any] interface {
	// Clone returns a copy of req for the hedge, when the request is
	// first called; false means the request is never hedged. It is called
	// before the original is sent, since sending may use the request up.
	Clone(req Req) (clone Req, ok bool)
	// CanRetry reports whether the hedge may still be sent, once the
	// delay has passed and before the hedge waits for the inner service
	// to be ready. It is given the copy Clone made. false means the
	// original alone answers the call.
	CanRetry(clone Req) bool
}

// Idempotent is a [Policy] that hedges every request: Clone returns the
// request unchanged and CanRetry reports true. It suits requests that are
// values (copying clones them) and safe to send twice. Its zero value is
// ready to use.
type Idempotent[Req any] struct{}

// Clone returns req and true.
func (Idempotent[Req]) Clone(req Req) (Req, bool) { return req, true }

// CanRetry returns true.
func (Idempotent[Req]) CanRetry(Req) bool { return true }
