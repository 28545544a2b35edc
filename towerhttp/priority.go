package towerhttp

import (
	"net/http"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// WithPriority makes a Handler give each request the priority f returns
// for it, in its context ([tower.WithPriority]), before the stack is asked
// for anything: a limit that keeps room for higher priorities (package
// adaptive's) admits, queues and, under a LoadShed, sheds by it, and the
// handler reads it with tower.PriorityFrom(r.Context()). f runs on the
// request's goroutine before its body is read; a request f says is
// [tower.PriorityNormal] keeps its context as it is, so only a marked one
// costs the copy of the request that carries the new context.
//
// A priority a client can set is a priority a client can claim: read it
// from a header ([PriorityHeader]) only where the header comes from a
// party you trust, such as your own proxy or services, and otherwise
// derive it from what the server knows: the route, the caller's identity.
// The default is no priority: every request is normal. It panics if f is
// nil.
func WithPriority(f func(r *http.Request) tower.Priority) HandlerOption {
	if isnil.Is(f) {
		panic("towerhttp.WithPriority: nil function")
	}
	return func(o *handlerOptions) { o.priority = f }
}

// PriorityHeader returns a function for [WithPriority] that reads a
// request's priority from its header name, as [tower.ParsePriority] reads
// it: "low", "normal" or "critical", in any case. A request without the
// header, or with another value, is normal. It panics if name is empty.
func PriorityHeader(name string) func(r *http.Request) tower.Priority {
	if name == "" {
		panic("towerhttp.PriorityHeader: empty header name")
	}
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) tower.Priority {
		v := r.Header[name]
		if len(v) == 0 {
			return tower.PriorityNormal
		}
		p, _ := tower.ParsePriority(v[0]) // normal if unknown
		return p
	}
}

// prioritize returns r with the priority h's function gives it in its
// context, or r itself if it is normal or h has no function.
func (h *Handler) prioritize(r *http.Request) *http.Request {
	if h.priority == nil {
		return r
	}
	p := h.priority(r)
	if p == tower.PriorityNormal {
		return r
	}
	return r.WithContext(tower.WithPriority(r.Context(), p))
}
