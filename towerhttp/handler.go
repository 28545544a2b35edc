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

// A Response is what a server stack's Call returns for a request its
// handler answered. The handler writes the response to the ResponseWriter
// itself; the Response reports its status, for layers that look at results
// (a load metric, a MapResult that counts errors).
type Response struct {
	// StatusCode is the status the handler sent: 200 if it wrote a body
	// or nothing at all, as net/http does.
	StatusCode int
}

// A Handler is an http.Handler that serves each request through a tower
// stack. It answers 413 at once if the request declares a body over
// [WithMaxBodyBytes], waits for the stack's Ready under the request's
// context before reading anything of the body, and calls the permit,
// whose leaf runs the wrapped http.Handler. A client that goes away ends
// the wait holding nothing; a handler that ignores its context keeps its
// permit until it returns. A stack that fails before the handler sent its
// status is answered by the error handler ([WithErrorHandler]).
//
// Responses are not buffered, so handlers can stream and flush; the price
// is that once the status is sent the Handler cannot answer with an error
// (wrap routes in http.TimeoutHandler to buffer them and get its 503). A
// handler that has returned keeps its response. Once the Handler has the
// stack's answer, a handler still running (left by a Timeout in Abandon
// mode) writes nowhere: its writes, and http.ResponseController's deadlines
// and full duplex, fail with http.ErrHandlerTimeout, w.Header returns a map
// that goes nowhere, and a response it had begun is aborted with
// http.ErrAbortHandler, so the client sees it broken rather than short. It
// must not read the body any more, nor touch a header map it got before:
// keep Abandon mode for handlers that ignore their context.
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
// stack.Builder ([ServerStack]). It panics if h, stack or an option is nil.
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
// [ServerStack], or a steer.Steer that picks a stack per path. It panics
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
// says otherwise: long enough for the requests in flight to finish, short
// enough that clients come back soon after a burst.
const DefaultRetryAfter = time.Second

// WithRetryAfter sets the delay a Handler asks for in a Retry-After header
// when the server cannot take the request now (the statuses [StatusCode]
// lists with Retry-After), in whole seconds, rounded up. An error that
// carries its own delay ([tower.RetryAfter]: a per-key limit's time to the
// key's next token) sends that instead, rounded up too. The default is
// [DefaultRetryAfter]; 0 sends no Retry-After. It panics if d is negative.
func WithRetryAfter(d time.Duration) HandlerOption {
	if d < 0 {
		panic(fmt.Sprintf("towerhttp.WithRetryAfter: d must not be negative, got %v", d))
	}
	return func(o *handlerOptions) { o.retryAfter = d }
}

// WithMaxBodyBytes limits request bodies to n bytes. A request that
// declares a longer body (Content-Length) is answered 413 before the stack
// is asked for anything; a longer body sent without a length is cut at n
// bytes by http.MaxBytesReader, and answered 413 if the handler then
// writes nothing (an answer of its own stands). The default, like
// math.MaxInt64, is no limit. It panics if n is not positive.
func WithMaxBodyBytes(n int64) HandlerOption {
	if n <= 0 {
		panic(fmt.Sprintf("towerhttp.WithMaxBodyBytes: n must be positive, got %d", n))
	}
	return func(o *handlerOptions) { o.maxBody = n }
}

// WithErrorHandler sets the function that answers a request the stack
// failed before anything was written, with Retry-After already set when
// the error calls for it (see [StatusCode]). It is called also for a
// client that has gone, to log it. The default is [WriteError]. It panics
// if f is nil.
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

// ServeHTTP serves r through the stack, as [Handler] says. A panic on the
// goroutine that serves r, in the handler or a layer, goes on up to
// net/http once the layers have given back what they held. A
// *tower.PanicError that a layer recovered on a goroutine of its own (a
// Timeout in Abandon mode) is handled as net/http handles a handler's
// panic: logged through the server's ErrorLog (or package log) as "http:
// panic serving <address>: <value>" with its stack, unless the value is
// http.ErrAbortHandler, and the response aborted with http.ErrAbortHandler,
// which closes the connection. A panic that broke the whole stack (in an
// inner Ready, on a Buffer's worker) fails every request with 503, like
// any stack not ready, and is logged once.
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
// always ready, that runs h for each request. It works only under a
// [Handler], which gives it the ResponseWriter through the call's context;
// called any other way, it panics. The request h sees carries the call's
// context, so a Timeout above cancels it, and reads of its body end at
// that context's deadline with an error that wraps os.ErrDeadlineExceeded,
// as under http.Server.ReadTimeout.
//
// The call returns a [Response] with the status h sent, and no error,
// except when h wrote nothing and: its context had ended (the context's
// error, so that a Timeout above tells its deadline from an answer); a
// read of its body ended at the deadline (an error that wraps
// context.DeadlineExceeded, answered 503 "request timed out"); or its
// body hit [WithMaxBodyBytes] (the *http.MaxBytesError).
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
		// derived one (a Timeout's).
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
