package balance

import (
	"context"
	"slices"
	"sync"

	"github.com/towergo/tower"
)

// Tried records the endpoints that a request's attempts were sent to, so
// that its retries and hedges go to others: Envoy's previous_hosts retry
// predicate. Put one in the request's context with [WithTried] before the
// retry or hedge layer (towerhttp.BalancedTransport does); each balancer
// Ready under that context then picks among the ready endpoints not tried
// yet, if there is one, and records the one it picks. Without it, an
// endpoint that failed fast looks the least loaded, and a retry may well
// land on it again.
//
// The zero Tried is empty and ready to use; it must not be copied. A
// Tried is for one request, and its keys are the balancer's, of type K.
// It is safe for concurrent use.
type Tried[K comparable] struct {
	mu   sync.Mutex
	keys []K
	buf  [2]K // keys' first room: a request and its retry record nothing more
}

type triedKey struct{}

// WithTried returns ctx carrying t: the balancers' Ready under it
// consults and extends t. A t of another key type than a balancer's is
// ignored by it.
func WithTried[K comparable](ctx context.Context, t *Tried[K]) context.Context {
	// A LoadShed above the balancer asks it with a done context: this one
	// carries t too.
	return tower.WithReadyValue(ctx, triedKey{}, t)
}

// Keys returns the keys of the endpoints picked under t so far, in order.
func (t *Tried[K]) Keys() []K {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.keys)
}

// has reports whether key was picked under t. The cache calls it with its
// lock held: t's lock nests inside the cache's.
func (t *Tried[K]) has(key K) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Contains(t.keys, key)
}

func (t *Tried[K]) add(key K) {
	t.mu.Lock()
	if t.keys == nil {
		t.keys = t.buf[:0]
	}
	t.keys = append(t.keys, key)
	t.mu.Unlock()
}
