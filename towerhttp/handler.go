package towerhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// A Response is what a server stack's Call returns for a request that its
// handler answered: the handler has written the response itself, to the
// ResponseWriter, and the Response reports what it sent, for layers that
// look at results (a load metric, a MapResult that counts errors).
type Response struct {
	// StatusCode is the status the handler sent: 200 if it wrote a body
	// or nothing at all, as net/http does.
	StatusCode int
}

// A Handler is an http.Handler that serves each request through a tower
// stack. For each request it checks the declared body size, waits for the
// stack's Ready under the request's context, and calls the permit, whose
// leaf runs the wrapped http.Handler. A stack that fails answers through
// the error handler; see the package doc for what it answers and when.
//
// A Handler is safe for concurrent use. Build one with [NewHandler] or
// [NewServiceHandler]; the zero Handler is not usable.
type Handler struct {
	svc        tower.Service[*http.Request, Response]
	retryAfter string // the Retry-After value, or "" for none
	maxBody    int64  // -1: no limit
	onError    func(http.ResponseWriter, *http.Request, error)
	requests   metrics.RequestSink                // nil: no request metrics
	router     router                             // the handler, if it routes as a ServeMux does: see WithRequestMetrics
	priority   func(*http.Request) tower.Priority // nil: every request is normal

	// logged is the last panic that broke the stack the Handler logged,
	// so that a stack broken for good logs its panic once, not once per
	// request.
	logged atomic.Pointer[tower.PanicError]
}

// NewHandler returns a Handler that serves each request through stack
// around h: stack's layers, the first one outermost, wrap
// [HandlerService](h). Give several layers with tower.Stack or a
// tower.Builder. It panics if h, stack or an option is nil.
func NewHandler(h http.Handler, stack tower.Layer[*http.Request, Response], opts ...HandlerOption) *Handler {
	if isnil.Is(h) {
		panic("towerhttp.NewHandler: nil http.Handler")
	}
	if isnil.Is(stack) {
		panic("towerhttp.NewHandler: nil stack")
	}
	o := newHandlerOptions("towerhttp.NewHandler", opts)
	svc := stack.Wrap(HandlerService(h))
	if isnil.Is(svc) {
		panic("towerhttp.NewHandler: stack.Wrap returned nil")
	}
	hd := o.handler(svc)
	hd.router, _ = h.(router)
	return hd
}

// NewServiceHandler returns a Handler that serves each request through
// svc, a stack whose leaves are [HandlerService]s: one built with
// tower.Builder, or a steer.Steer that picks a stack per path. It panics
// if svc or an option is nil.
func NewServiceHandler(svc tower.Service[*http.Request, Response], opts ...HandlerOption) *Handler {
	if isnil.Is(svc) {
		panic("towerhttp.NewServiceHandler: nil Service")
	}
	return newHandlerOptions("towerhttp.NewServiceHandler", opts).handler(svc)
}

// A HandlerOption configures a [Handler].
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	retryAfter time.Duration
	maxBody    int64
	onError    func(http.ResponseWriter, *http.Request, error)
	requests   metrics.RequestSink
	priority   func(*http.Request) tower.Priority // nil: every request is normal
}

// DefaultRetryAfter is the Retry-After a Handler sends with a 503 that
// says the server cannot take the request now, unless [WithRetryAfter]
// says otherwise: one second, long enough for the requests in flight to
// finish (they are meant to take milliseconds), short enough that a
// client does not stay away long once the burst has passed.
const DefaultRetryAfter = time.Second

// WithRetryAfter sets the delay a Handler asks for, in a Retry-After
// header, when it answers 503 because the stack shed the request or is
// not ready (see [StatusCode]). The header carries whole seconds, d
// rounded up: math.MaxInt64 sends 9223372037. An error that says when to
// try again itself ([tower.RetryAfter]: a per-key limit's, the time until
// the key's next token) sends that instead, rounded up the same way. The
// default is [DefaultRetryAfter]; 0 sends no Retry-After at all. It panics
// if d is negative.
func WithRetryAfter(d time.Duration) HandlerOption {
	if d < 0 {
		panic(fmt.Sprintf("towerhttp.WithRetryAfter: d must not be negative, got %v", d))
	}
	return func(o *handlerOptions) { o.retryAfter = d }
}

// WithMaxBodyBytes limits request bodies to n bytes. A request that
// declares a longer body (Content-Length) is answered 413 before the stack
// is asked for anything; a longer body sent without a length is cut at n
// bytes by http.MaxBytesReader, and if the handler returns without writing
// anything after its read failed, the request is answered 413. A handler
// that answers the read error itself keeps its answer. The default is no
// limit, as in net/http; math.MaxInt64 is no limit either. It panics if n
// is not positive.
func WithMaxBodyBytes(n int64) HandlerOption {
	if n <= 0 {
		panic(fmt.Sprintf("towerhttp.WithMaxBodyBytes: n must be positive, got %d", n))
	}
	return func(o *handlerOptions) { o.maxBody = n }
}

// WithErrorHandler sets the function that answers a request the stack
// failed, while nothing has been written yet: it gets the request and the
// error, and the ResponseWriter with Retry-After already set when the
// error calls for it (see [StatusCode]). The default is [WriteError]. It
// panics if f is nil.
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) HandlerOption {
	if isnil.Is(f) {
		panic("towerhttp.WithErrorHandler: nil function")
	}
	return func(o *handlerOptions) { o.onError = f }
}

func newHandlerOptions(fn string, opts []HandlerOption) handlerOptions {
	o := handlerOptions{retryAfter: DefaultRetryAfter, maxBody: -1, onError: WriteError}
	option.Onto(fn, &o, opts)
	return o
}

func (o handlerOptions) handler(svc tower.Service[*http.Request, Response]) *Handler {
	h := &Handler{svc: svc, maxBody: o.maxBody, onError: o.onError, requests: o.requests, priority: o.priority}
	if o.retryAfter > 0 {
		h.retryAfter = strconv.FormatInt(wholeSeconds(o.retryAfter), 10)
	}
	return h
}

// wholeSeconds returns d in whole seconds, rounded up. It divides before
// it rounds, so that no d near math.MaxInt64 wraps around.
func wholeSeconds(d time.Duration) int64 {
	secs := int64(d / time.Second)
	if d%time.Second > 0 {
		secs++
	}
	return secs
}

// ServeHTTP serves r through the stack: Ready, under r's context, before
// anything of the request is read, then the call, whose leaf runs the
// handler. A panic in the handler, or in a layer, on the goroutine that
// serves r goes on up to net/http once the stack has given back what it
// held. One that a layer recovered on a goroutine of its own (a Timeout in
// Abandon mode) and returned as a *tower.PanicError is logged and aborts
// the response, as net/http does with a handler's panic: see the package
// doc.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = h.prioritize(r)
	if h.requests != nil {
		h.serveObserved(w, r)
		return
	}
	h.serve(w, r, nil)
}

// serve is ServeHTTP, telling o, unless it is nil, what happens to the
// request (see observe.go).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, o *observation) {
	if h.maxBody >= 0 && r.ContentLength > h.maxBody {
		h.fail(w, r, &http.MaxBytesError{Limit: h.maxBody}, o)
		return
	}
	ctx := r.Context()
	p, err := h.svc.Ready(ctx)
	if err != nil {
		if err != ctx.Err() {
			err = &ReadyError{Err: err}
		}
		h.fail(w, r, err, o)
		return
	}
	ex := &exchange{Context: ctx, w: w}
	if o != nil {
		o.ex, ex.route.wanted = ex, true
	}
	ex.watchBody(r, h.maxBody)
	returned := false
	defer func() {
		if !returned {
			// A panic going up to net/http: leave a writer that a handler
			// still running elsewhere can no longer use.
			ex.finish()
		}
	}()
	_, err = p.Call(ex, r)
	returned = true
	h.settle(w, r, ex, err, o)
}

// settle finishes ex once the stack's call has returned err, and answers r
// if the stack failed.
func (h *Handler) settle(w http.ResponseWriter, r *http.Request, ex *exchange, err error, o *observation) {
	wrote, running := ex.finish()
	if o != nil {
		o.ended, o.err = true, err
	}
	if err == nil {
		return
	}
	if pe := requestPanic(err); pe != nil {
		abort(r, pe)
	}
	if ex.bodyTimedOut.Load() && errors.Is(err, context.Canceled) {
		// net/http cancels the request's context when a read from the
		// connection fails, the read the body's deadline ended included:
		// the client has not gone, its request ran out of time.
		err = errBodyDeadline
	}
	switch {
	case !wrote:
		h.fail(w, r, err, o)
	case running:
		// The handler is still writing (its call was abandoned) and the
		// client has part of a response: abort it, so that the client sees
		// a broken response and not a short one that looks complete.
		panic(http.ErrAbortHandler)
	}
	// Otherwise the handler wrote its whole response before the stack
	// failed (a Timeout that found it late): the response stands.
}

// fail answers r with the error handler, with Retry-After set when err
// says the server cannot take the request now.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error, o *observation) {
	if h.retryAfter != "" && retryLater(err) {
		if d, ok := tower.RetryAfter(err); ok {
			w.Header().Set("Retry-After", strconv.FormatInt(wholeSeconds(d), 10))
		} else {
			w.Header().Set("Retry-After", h.retryAfter)
		}
	}
	h.logBroken(r, err)
	if o != nil {
		h.failObserved(w, r, err, o)
		return
	}
	h.onError(w, r, err)
}

// HandlerService returns h as the leaf of a server stack: a Service,
// always ready, that runs h for each request it is called with. It works
// only under a [Handler], which gives it the ResponseWriter through the
// call's context; called any other way, it panics. The request h sees
// carries the call's context, so a Timeout above it cancels it, and its
// body's reads end at that context's deadline (see the package doc).
//
// The call returns a [Response] with the status h sent, and no error,
// except in three cases where h wrote nothing: if its context had ended,
// h gave up, and the call returns the context's error (so that a Timeout
// above tells its deadline from an answer); if a read of its body ended
// at the deadline, the call returns an error that wraps
// context.DeadlineExceeded; if its body hit the limit of
// [WithMaxBodyBytes], the call returns the *http.MaxBytesError.
func HandlerService(h http.Handler) tower.Service[*http.Request, Response] {
	if isnil.Is(h) {
		panic("towerhttp.HandlerService: nil http.Handler")
	}
	return tower.ServiceFunc[*http.Request, Response](func(ctx context.Context, r *http.Request) (Response, error) {
		ex := exchangeFrom(ctx)
		if ex == nil {
			panic("towerhttp: a HandlerService was called outside a towerhttp.Handler")
		}
		// The context passed down governs the call: a layer may have
		// derived one (a Timeout's), and the handler must see it.
		gov := ctx
		if ctx == context.Context(ex) {
			gov = ex.Context
		}
		if ex.body != nil {
			r = ex.request(r, gov)
		} else if r.Context() != gov {
			r = r.WithContext(gov)
		}
		ex.enter()
		defer ex.leave()
		h.ServeHTTP(ex, r)
		if ex.route.wanted {
			ex.matched(r) // the pattern the handler's ServeMux set, for the request metrics
		}
		return ex.result(gov)
	})
}
