package proxy

import (
	"net/http"
	"sync/atomic"
)

// A reload that changes an upstream (its backends, its timeouts, its
// retries) builds it anew, but its limit carries over when the limit is
// configured alike (the same algorithm, the same queue): the new upstream
// takes over the old one's limited service, LoadShed and adaptive limit
// with what it learned, whose leaf is switched to the new upstream's
// reverse proxy. (A reload that changes only an upstream's list of
// backends keeps the upstream itself: see upstream.same.)
// A new limiter starts with a probe of the service's no-load latency,
// during which a quarter of its limit is in force and a LoadShed sheds
// the rest (see package adaptive): a reload under load would refuse
// requests, at every reload.
//
// The leaf is switched before the new state is put in force: a request
// counted in the new upstream's drain always reaches the new reverse
// proxy, and one counted in the old upstream's reaches either, both of
// which live until it is done.

// switchable is the leaf of an upstream's limited service: the handler
// of the upstream in force (its reverse proxy, behind the retries'
// replay), which a reload switches.
type switchable struct {
	u atomic.Pointer[upstream]
}

func (s *switchable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.u.Load().handler.ServeHTTP(w, r)
}

// inherit makes u, built by a reload, take over the limited service of
// old, the upstream of the same name it replaces, if there is one and
// its limit is configured as u's.
func (u *upstream) inherit(old *upstream) {
	if old == nil || old.cfg.Limit != u.cfg.Limit || old.queue != u.queue {
		return
	}
	u.svc, u.leaf = old.svc, old.leaf
	u.obs.limit = old.obs.limit // what old.svc's limit reports to
}

// takeOver points u's leaf at u's reverse proxy; a reload calls it once
// every upstream of the new state is built, before the state is put in
// force.
func (u *upstream) takeOver() { u.leaf.u.Store(u) }
