package towerhttp

import (
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Transport is an http.RoundTripper that sends each request through the
// tower stack of its host, built the first time a request goes there, so
// that a limit in the stack applies per host (a layer that shares its
// state, limit.NewSharedConcurrencyLayer, puts every host under one).
// Hosts are told apart in canonical form ("http://Example.COM.:80/" shares
// the stack of "http://example.com/"); the request goes to its URL as
// written.
//
// At most [WithMaxHosts] stacks are kept: a request to a new host then
// drops the least recently used idle stack, closing it if it has a Close
// method, or fails with [ErrTooManyHosts] if there is none.
//
// A Transport is safe for concurrent use. Build one with [NewTransport];
// the zero Transport is not usable.
type Transport struct {
	base  http.RoundTripper
	stack tower.Layer[*http.Request, *http.Response]
	leaf  tower.Service[*http.Request, *http.Response]
	max   int

	mu    sync.Mutex
	hosts map[hostKey]*host
	clock uint64 // counts requests
}

type host struct {
	svc      tower.Service[*http.Request, *http.Response]
	inFlight int
	used     uint64 // the Transport's clock at the last round trip
}

// DefaultMaxHosts is the number of host stacks a Transport keeps unless
// [WithMaxHosts] says otherwise.
const DefaultMaxHosts = 1024

// A TransportOption configures a [Transport].
type TransportOption func(*transportOptions)

type transportOptions struct {
	maxHosts int
}

// WithMaxHosts sets how many host stacks a Transport keeps at most. The
// default is [DefaultMaxHosts]; math.MaxInt keeps every host's. It panics
// if n is less than 1.
func WithMaxHosts(n int) TransportOption {
	option.PanicIf(n < 1, "towerhttp.WithMaxHosts: n must be at least 1, got %d", n)
	return func(o *transportOptions) { o.maxHosts = n }
}

// NewTransport returns a Transport whose host stacks are stack's layers,
// the first one outermost, around a leaf that calls base.RoundTrip. It
// panics if base, stack or an option is nil.
func NewTransport(base http.RoundTripper, stack tower.Layer[*http.Request, *http.Response], opts ...TransportOption) *Transport {
	option.PanicIf(isnil.Is(base), "towerhttp.NewTransport: nil base RoundTripper")
	option.PanicIf(isnil.Is(stack), "towerhttp.NewTransport: nil stack")
	o := transportOptions{maxHosts: DefaultMaxHosts}
	option.Onto("towerhttp.NewTransport", &o, opts)
	return &Transport{
		base:  base,
		stack: stack,
		leaf:  tower.ServiceFunc[*http.Request, *http.Response]((&leaf{base: base}).call),
		max:   o.maxHosts,
		hosts: make(map[hostKey]*host),
	}
}

var errNoURL = errors.New("towerhttp: nil Request.URL")

// RoundTrip sends req through its host's stack, and returns the stack's
// error as it is.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errNoURL
	}
	u := req.URL
	h, dropped, err := t.acquire(hostKey{u.Scheme, canonicalHost(u.Scheme, u.Host)})
	if err != nil {
		closeBody(req)
		return nil, err
	}
	defer t.release(h)
	closeService(dropped) // if any
	return roundTrip(req.Context(), h.svc, req)
}

// acquire counts a round trip on the stack of host k, built if need be,
// and returns the stack it dropped to make room, for the caller to close.
func (t *Transport) acquire(k hostKey) (h *host, dropped tower.Service[*http.Request, *http.Response], err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clock++
	h = t.hosts[k]
	if h == nil {
		if len(t.hosts) >= t.max { // drop the least recently used idle stack
			var old hostKey
			var found *host
			for k, o := range t.hosts {
				if o.inFlight == 0 && (found == nil || o.used < found.used) {
					old, found = k, o
				}
			}
			if found == nil {
				return nil, nil, ErrTooManyHosts
			}
			delete(t.hosts, old)
			dropped = found.svc
		}
		svc := t.stack.Wrap(t.leaf)
		option.PanicIf(isnil.Is(svc), "towerhttp.Transport: stack.Wrap returned nil")
		h = &host{svc: svc}
		t.hosts[k] = h
	}
	h.inFlight++
	h.used = t.clock
	return h, dropped, nil
}

func (t *Transport) release(h *host) {
	t.mu.Lock()
	h.inFlight--
	t.mu.Unlock()
}

func closeService(svc tower.Service[*http.Request, *http.Response]) {
	if c, ok := svc.(io.Closer); ok {
		c.Close()
	}
}

// Hosts returns the number of host stacks the Transport keeps now.
func (t *Transport) Hosts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.hosts)
}

// CloseIdleConnections closes the base's idle connections, if it can.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Close drops every host stack, closing those that have a Close method,
// and closes the base's idle connections; later round trips get new
// stacks. It returns nil.
func (t *Transport) Close() error {
	t.mu.Lock()
	hosts := t.hosts
	t.hosts = make(map[hostKey]*host)
	t.mu.Unlock()
	for _, h := range hosts {
		closeService(h.svc)
	}
	t.CloseIdleConnections()
	return nil
}
