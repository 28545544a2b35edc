package towerhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// closing is a host stack with a Close method, which panics the first
// time one of the stacks of panicked is closed.
type closing struct {
	tower.Service[*http.Request, *http.Response]
	panicked *atomic.Bool
}

func (c closing) Close() error {
	if c.panicked.CompareAndSwap(false, true) {
		panic("Close broke")
	}
	return nil
}

// A host stack dropped to make room whose Close panics: the panic goes
// up to the round trip that dropped it, and that round trip does not stay
// counted on its own host's stack, which can be dropped in turn.
func TestTransportDroppedStackClosePanics(t *testing.T) {
	var panicked atomic.Bool
	stack := tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
		return closing{inner, &panicked}
	})
	base := fakeBase(func(req *http.Request) (*http.Response, error) { return textResponse(req, 200, "ok", nil), nil })
	tr := towerhttp.NewTransport(base, stack, towerhttp.WithMaxHosts(1))
	defer tr.Close()
	roundTrip := func(url string) error {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := roundTrip("http://a/"); err != nil {
		t.Fatal(err)
	}
	towertest.Panics(t, "Close broke", func() { roundTrip("http://b/") })
	if err := roundTrip("http://c/"); err != nil {
		t.Errorf("a round trip to a third host: %v, want the second host's stack dropped for it", err)
	}
}

// panickyBody is a response body whose Close panics.
type panickyBody struct{ io.Reader }

func (panickyBody) Close() error { panic("body broke") }

// A response body whose Close panics still ends its request's part in
// its endpoint's load: the panic goes up to the caller of Close, and the
// endpoint is not left loaded.
func TestBodyCompletionClosePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			resp := textResponse(req, 200, "body", nil)
			resp.Body = panickyBody{strings.NewReader("body")}
			return resp, nil
		})
		pending := load.NewPendingRequests(
			towerhttp.NewEndpoint(base, mustParse(t, "http://x"), tower.Stack[*http.Request, *http.Response]()),
			load.WithCompletion[*http.Response](towerhttp.BodyCompletion{}),
		)
		tr := towerhttp.NewBalancedTransport(discover.NewList[endpoint](pending), tower.Stack[*http.Request, *http.Response]())
		defer tr.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		towertest.Panics(t, "body broke", func() { resp.Body.Close() })
		if got := pending.Load(); got != 0 {
			t.Errorf("load after the body's Close panicked: got %v, want 0", got)
		}
	})
}

// ownDone is a context with a Done channel of its own, which no package
// of the standard library knows how to follow: context.AfterFunc starts a
// goroutine to watch it.
type ownDone struct {
	context.Context
	done chan struct{}
}

func (c ownDone) Done() <-chan struct{} { return c.done }

func (c ownDone) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// A base RoundTripper that panics, under a context a layer derived: the
// panic goes up to the caller, and what the leaf set up for the attempt
// is undone, the attempt's context canceled and its watch of the layer's
// context stopped.
func TestTransportBasePanicsUnderLayerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		done := make(chan struct{})
		defer close(done)
		stack := tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
			return tower.ServiceFunc[*http.Request, *http.Response](func(ctx context.Context, req *http.Request) (*http.Response, error) {
				return tower.Call(ownDone{ctx, done}, inner, req)
			})
		})
		var attempt context.Context
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			attempt = req.Context()
			panic("base broke")
		})
		tr := towerhttp.NewTransport(base, stack)
		defer tr.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://a/", nil)
		towertest.Panics(t, "base broke", func() { tr.RoundTrip(req) })
		synctest.Wait()
		if attempt == nil || attempt.Err() == nil {
			t.Error("the attempt's context lives on after the base panicked")
		}
	})
}

// A base whose response bodies' Close panics: the panic goes up to the
// caller, and every other response the round trip got is closed all the
// same.
func TestTransportClosesEveryResponseWhenOneClosePanics(t *testing.T) {
	var closed atomic.Int32
	var n atomic.Int32
	base := fakeBase(func(req *http.Request) (*http.Response, error) {
		resp := textResponse(req, 200, "ok", &closed)
		if n.Add(1) == 1 {
			resp.Body = panickyBody{strings.NewReader("ok")}
		}
		return resp, nil
	})
	// A layer that sends the request twice, and answers with an error:
	// both responses are the transport's to close.
	twice := tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
		return tower.ServiceFunc[*http.Request, *http.Response](func(ctx context.Context, req *http.Request) (*http.Response, error) {
			tower.Call(ctx, inner, req)
			tower.Call(ctx, inner, req)
			return nil, errors.New("neither")
		})
	})
	tr := towerhttp.NewTransport(base, twice)
	defer tr.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://a/", nil)
	towertest.Panics(t, "body broke", func() { tr.RoundTrip(req) })
	if got := closed.Load(); got != 1 {
		t.Errorf("%d of the other responses closed, want 1", got)
	}
}

// A stack whose Wrap panics, given to NewBalancedTransport: the panic
// goes up to its caller, and the balancer it wrapped is closed, its
// endpoints' reservations given back and its goroutines ended.
func TestBalancedTransportWrapPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &countingService{}
		ep := load.NewPendingRequests[*http.Request, *http.Response](inner)
		stack := tower.LayerFunc[*http.Request, *http.Response](func(tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
			panic("Wrap broke")
		})
		towertest.Panics(t, "Wrap broke", func() { towerhttp.NewBalancedTransport(discover.NewList[endpoint](ep), stack) })
		synctest.Wait()
		if n := inner.outstanding.Load(); n != 0 {
			t.Errorf("%d permits of the endpoint outstanding, want 0", n)
		}
	})
}

// countingService is a service that counts the permits it has handed out
// and not had back.
type countingService struct{ outstanding atomic.Int32 }

func (c *countingService) Ready(context.Context) (tower.Permit[*http.Request, *http.Response], error) {
	c.outstanding.Add(1)
	return tower.NewPermit[*http.Request, *http.Response](c, 0), nil
}

func (c *countingService) CallReserved(context.Context, uint64, *http.Request) (*http.Response, error) {
	c.outstanding.Add(-1)
	return nil, errors.New("not for calling")
}

func (c *countingService) ReleaseReserved(uint64) { c.outstanding.Add(-1) }

// User code a Handler calls on the request's goroutine, around its
// stack, panics up to net/http: a priority function, an error handler, a
// request sink. The stack holds nothing by then, and the next request is
// served.
func TestHandlerUserCodePanics(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	shed := tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
		return towerhttp.Response{}, loadshed.ErrOverloaded
	})
	for _, tt := range []struct {
		name string
		h    func(stack tower.Layer[*http.Request, towerhttp.Response]) *towerhttp.Handler
		path string // "/shed" makes the stack fail the request
	}{
		{"Priority", func(stack tower.Layer[*http.Request, towerhttp.Response]) *towerhttp.Handler {
			return towerhttp.NewHandler(ok, stack, towerhttp.WithPriority(func(r *http.Request) tower.Priority {
				if r.URL.Path == "/panic" {
					panic("user code broke")
				}
				return tower.PriorityNormal
			}))
		}, "/panic"},
		{"ErrorHandler", func(stack tower.Layer[*http.Request, towerhttp.Response]) *towerhttp.Handler {
			return towerhttp.NewHandler(ok, stack, towerhttp.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) {
				panic("user code broke")
			}))
		}, "/shed"},
		{"ErrorHandlerObserved", func(stack tower.Layer[*http.Request, towerhttp.Response]) *towerhttp.Handler {
			return towerhttp.NewHandler(ok, stack, towerhttp.WithRequestMetrics(new(requests)), towerhttp.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) {
				panic("user code broke")
			}))
		}, "/shed"},
		{"RequestSink", func(stack tower.Layer[*http.Request, towerhttp.Response]) *towerhttp.Handler {
			return towerhttp.NewHandler(ok, stack, towerhttp.WithRequestMetrics(panickyRequests{}))
		}, "/panic"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sem := limit.NewSemaphore(1)
			// The limit's permit is held through the call; a request to
			// /shed is failed by the stack below it.
			stack := tower.Stack(limit.NewSharedConcurrencyLayer[*http.Request, towerhttp.Response](sem),
				tower.LayerFunc[*http.Request, towerhttp.Response](func(inner tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
					return tower.ServiceFunc[*http.Request, towerhttp.Response](func(ctx context.Context, r *http.Request) (towerhttp.Response, error) {
						if r.URL.Path == "/shed" {
							return tower.Call(ctx, shed, r)
						}
						return tower.Call(ctx, inner, r)
					})
				}))
			h := tt.h(stack)
			towertest.Panics(t, "user code broke", func() { answer(h, "GET", tt.path) })
			if n := sem.Available(); n != 1 {
				t.Errorf("got %d permits free after the panic, want 1", n)
			}
			if tt.name != "RequestSink" {
				if got := answer(h, "GET", "/"); got != "200 ok" {
					t.Errorf("the next request: got %q, want 200 ok", got)
				}
			}
		})
	}
}

// panickyRequests is a request sink that panics.
type panickyRequests struct{}

func (panickyRequests) ObserveRequest(metrics.Request) { panic("user code broke") }

// A RetryPolicy whose Idempotent function panics as it judges an attempt:
// the panic goes up to the caller, and the attempt's response is closed.
func TestRetryPolicyClassifierPanics(t *testing.T) {
	var closed atomic.Int32
	base := fakeBase(func(req *http.Request) (*http.Response, error) {
		return textResponse(req, http.StatusServiceUnavailable, "busy", &closed), nil
	})
	policy := towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Idempotent: func(*http.Request) bool { panic("classifier broke") }})
	tr := towerhttp.NewTransport(base, towerhttp.ClientStack().RetryPolicy(policy))
	defer tr.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://a/", nil)
	towertest.Panics(t, "classifier broke", func() { tr.RoundTrip(req) })
	if got := closed.Load(); got != 1 {
		t.Errorf("%d responses closed, want 1", got)
	}
}
