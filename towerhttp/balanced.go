package towerhttp

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/load"
)

// A BalancedTransport is an http.RoundTripper that spreads requests over
// several backends with balance.P2C: each request goes through the
// transport's stack, then to one of the endpoints, each a stack of its own
// in front of one backend ([NewEndpoint]). The request's URL says what to
// ask for; the endpoint says where it goes. Layers for the whole client (a
// retry, a timeout) go in the transport's stack; layers per backend (a
// concurrency limit) in each endpoint's.
//
// A BalancedTransport is safe for concurrent use. Build one with
// [NewBalancedTransport] and Close it when done; the zero value is not
// usable.
type BalancedTransport struct {
	svc   tower.Service[*http.Request, *http.Response]
	tried func(context.Context) context.Context // adds a fresh balance.Tried
	bal   interface {
		Close() error
		Shutdown(context.Context) error
	}
}

// NewBalancedTransport returns a BalancedTransport over the endpoints
// discovered by d, built with [NewEndpoint], under stack, whose layers, the
// first one outermost, wrap the balancer. opts configure the balancer:
// balance.WithFailFast makes a request fail rather than wait while there
// are no endpoints. It panics if d, stack or an option is nil.
func NewBalancedTransport[K comparable](d discover.Discover[K, load.Service[*http.Request, *http.Response]], stack tower.Layer[*http.Request, *http.Response], opts ...balance.Option) *BalancedTransport {
	option.PanicIf(isnil.Is(stack), "towerhttp.NewBalancedTransport: nil stack")
	option.PanicIf(isnil.Is(d), "towerhttp.NewBalancedTransport: nil Discover")
	p2c := balance.NewP2C(d, opts...)
	var svc tower.Service[*http.Request, *http.Response]
	guard.Undo(func() { svc = stack.Wrap(p2c) }, func() { p2c.Close() })
	if isnil.Is(svc) {
		p2c.Close()
		panic("towerhttp.NewBalancedTransport: stack.Wrap returned nil")
	}
	tried := func(ctx context.Context) context.Context { return balance.WithTried(ctx, new(balance.Tried[K])) }
	return &BalancedTransport{svc: svc, tried: tried, bal: p2c}
}

// RoundTrip sends req through the stack and the balancer to one of the
// backends. The attempts of a retry or a hedge go to backends not tried
// yet, while one is ready (balance.Tried).
func (b *BalancedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errNoURL
	}
	return roundTrip(b.tried(req.Context()), b.svc, req)
}

// Close stops the balancer and gives back the reservations its ready
// endpoints hold; requests sent after it fail with balance.ErrClosed.
// It returns nil.
func (b *BalancedTransport) Close() error { return b.bal.Close() }

// Shutdown stops the balancer as Close does, and waits for its goroutines
// while ctx lasts: it returns nil once they have exited, or ctx.Err().
func (b *BalancedTransport) Shutdown(ctx context.Context) error { return b.bal.Shutdown(ctx) }

// An endpoint's load estimate starts at EndpointRTT, and fades over
// EndpointDecay: Linkerd's values.
const (
	EndpointRTT   = 30 * time.Millisecond
	EndpointDecay = 10 * time.Second
)

// NewEndpoint returns the endpoint of a [BalancedTransport] for the
// backend at target: stack's layers, the first one outermost, around a
// leaf that sends the request with base to target's scheme and host,
// keeping its path, query and Host header. Its load is load.PeakEwma's,
// with a request pending until its body is done ([BodyCompletion]). It
// panics if base or stack is nil, if target is nil or lacks a scheme or a
// host, or if an option is nil.
func NewEndpoint(base http.RoundTripper, target *url.URL, stack tower.Layer[*http.Request, *http.Response], opts ...EndpointOption) load.Service[*http.Request, *http.Response] {
	option.PanicIf(isnil.Is(base), "towerhttp.NewEndpoint: nil base RoundTripper")
	option.PanicIf(target == nil, "towerhttp.NewEndpoint: nil target")
	if target.Scheme == "" || target.Host == "" {
		panic("towerhttp.NewEndpoint: target " + target.String() + " lacks a scheme or a host")
	}
	option.PanicIf(isnil.Is(stack), "towerhttp.NewEndpoint: nil stack")
	o := option.Apply[endpointOptions]("towerhttp.NewEndpoint", opts)
	u := *target
	l := &leaf{base: base, target: &u}
	if o.targetHost {
		l.host = u.Host
	}
	svc := stack.Wrap(tower.ServiceFunc[*http.Request, *http.Response](l.call))
	option.PanicIf(isnil.Is(svc), "towerhttp.NewEndpoint: stack.Wrap returned nil")
	return load.NewPeakEwma(svc, EndpointRTT, EndpointDecay, load.WithCompletion[*http.Response](BodyCompletion{}))
}

// An EndpointOption configures an endpoint of [NewEndpoint].
type EndpointOption func(*endpointOptions)

type endpointOptions struct {
	targetHost bool
}

// WithTargetHost makes an endpoint send its target's host (host:port as
// the target's URL has it) as the Host header, rather than the request's.
func WithTargetHost() EndpointOption {
	return func(o *endpointOptions) { o.targetHost = true }
}

// BodyCompletion is a load.Completion for HTTP responses: a request counts
// in its endpoint's load until its response body is closed or read to the
// end. Its zero value is ready to use.
type BodyCompletion struct{}

// Track wraps res's body so that h.Done is called when it is done, and
// returns res. A 101 Switching Protocols response is done at once.
func (BodyCompletion) Track(h *load.Handle, res *http.Response) *http.Response {
	if res == nil || res.Body == nil || res.StatusCode == http.StatusSwitchingProtocols {
		h.Done()
		return res
	}
	res.Body = wrapBody(res.Body, true, h.Done)
	return res
}
