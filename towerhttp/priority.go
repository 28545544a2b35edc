package towerhttp

import (
	"net/http"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// WithPriority makes a Handler put the priority f returns for each request
// in its context ([tower.WithPriority]) before the stack is asked for
// anything: package adaptive's limit admits, queues and, under a LoadShed,
// sheds by it, shedding low priority first, and the handler reads it with
// tower.PriorityFrom(r.Context()). f runs on the request's goroutine before
// its body is read; a [tower.PriorityNormal] request keeps its context.
//
// A priority a client can set is one a client can claim: read it from a
// header ([PriorityHeader]) only where the header comes from a party you
// trust, and otherwise derive it from what the server knows (the route,
// the caller's identity). The default is every request normal. It panics
// if f is nil.
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
