package towerhttp

import (
	"context"
	"errors"
	"log"
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
// handler answered: the handler writes the response itself, and the
// Response reports its status, for layers that look at results.
type Response struct {
	// StatusCode is the status the handler sent: 200 if it wrote a body
	// or nothing at all, as net/http does.
	StatusCode int
}

// A Handler is an http.Handler that serves each request through a tower
// stack: it waits for the stack's Ready under the request's context before
// reading anything of the body, and calls the permit, whose leaf runs the
// wrapped http.Handler. A client that goes away ends the wait holding
// nothing; a handler that ignores its context keeps its permit until it
// returns. A stack that fails before the handler sent its status is
// answered by the error handler ([WithErrorHandler]).
//
// Responses are not buffered, so handlers can stream, and a handler that
// has returned keeps its response. Once the Handler has the stack's
// answer, a handler still running (left by a Timeout in Abandon mode)
// writes nowhere: its writes and http.ResponseController's calls fail with
// http.ErrHandlerTimeout, w.Header returns a map that goes nowhere, and a
// response it had begun is aborted, so the client sees it broken rather
// than short. It must not read the body any more, nor touch a header map
// it got before.
//
// A Handler is safe for concurrent use. Build one with [NewHandler] or
// [NewServiceHandler]; the zero Handler is not usable.
type Handler struct {
	handlerOptions
	svc         tower.Service[*http.Request, Response]
	retryHeader string                           // "": no Retry-After
	router      router                           // the handler, if it routes as a ServeMux does
	logged      atomic.Pointer[tower.PanicError] // the last panic that broke the stack
}

// NewHandler returns a Handler that serves each request through stack's
// layers, the first one outermost, around [HandlerService](h). It panics
// if h, stack or an option is nil.
func NewHandler(h http.Handler, stack tower.Layer[*http.Request, Response], opts ...HandlerOption) *Handler {
	option.PanicIf(isnil.Is(h), "towerhttp.NewHandler: nil http.Handler")
	option.PanicIf(isnil.Is(stack), "towerhttp.NewHandler: nil stack")
	hd := newHandler("towerhttp.NewHandler", opts)
	hd.svc = stack.Wrap(HandlerService(h))
	option.PanicIf(isnil.Is(hd.svc), "towerhttp.NewHandler: stack.Wrap returned nil")
	hd.router, _ = h.(router)
	return hd
}

// NewServiceHandler returns a Handler that serves each request through
// svc, a stack whose leaves are [HandlerService]s (a steer.Steer that
// picks a stack per path). It panics if svc or an option is nil.
func NewServiceHandler(svc tower.Service[*http.Request, Response], opts ...HandlerOption) *Handler {
	option.PanicIf(isnil.Is(svc), "towerhttp.NewServiceHandler: nil Service")
	hd := newHandler("towerhttp.NewServiceHandler", opts)
	hd.svc = svc
	return hd
}

// A HandlerOption configures a [Handler].
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	retryAfter time.Duration
	maxBody    int64 // -1: no limit
	onError    func(http.ResponseWriter, *http.Request, error)
	requests   metrics.RequestSink                // nil: no request metrics
	priority   func(*http.Request) tower.Priority // nil: every request is normal
}

// DefaultRetryAfter is the Retry-After of [WithRetryAfter]'s default.
const DefaultRetryAfter = time.Second

// WithRetryAfter sets the delay a Handler asks for in a Retry-After header
// when the server cannot take the request now (the statuses [StatusCode]
// lists with Retry-After), in whole seconds, rounded up. An error that
// carries its own delay ([tower.RetryAfter]) sends that instead. The
// default is [DefaultRetryAfter]; 0 sends no Retry-After. It panics if d
// is negative.
func WithRetryAfter(d time.Duration) HandlerOption {
	option.PanicIf(d < 0, "towerhttp.WithRetryAfter: d must not be negative, got %v", d)
	return func(o *handlerOptions) { o.retryAfter = d }
}

// WithMaxBodyBytes limits request bodies to n bytes. A request that
// declares a longer body is answered 413 before the stack is asked for
// anything; one sent without a length is cut at n bytes, and answered 413
// if the handler then writes nothing. The default is no limit. It panics
// if n is not positive.
func WithMaxBodyBytes(n int64) HandlerOption {
	option.PanicIf(n <= 0, "towerhttp.WithMaxBodyBytes: n must be positive, got %d", n)
	return func(o *handlerOptions) { o.maxBody = n }
}

// WithErrorHandler sets the function that answers a request the stack
// failed before anything was written, with Retry-After already set; it is
// called also for a client that has gone. The default is [WriteError]. It
// panics if f is nil.
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) HandlerOption {
	option.PanicIf(isnil.Is(f), "towerhttp.WithErrorHandler: nil function")
	return func(o *handlerOptions) { o.onError = f }
}

// WithPriority makes a Handler put the priority f returns for each request
// in its context ([tower.WithPriority]) before the stack is asked for
// anything, for package adaptive's limit and tower.PriorityFrom. A
// priority a client can set is one a client can claim: read it from a
// header ([PriorityHeader]) only where the header comes from a party you
// trust. The default is every request normal. It panics if f is nil.
func WithPriority(f func(r *http.Request) tower.Priority) HandlerOption {
	option.PanicIf(isnil.Is(f), "towerhttp.WithPriority: nil function")
	return func(o *handlerOptions) { o.priority = f }
}

// PriorityHeader returns a function for [WithPriority] that reads a
// request's priority from its header name with [tower.ParsePriority]: a
// request without one it reads is normal. It panics if name is empty.
func PriorityHeader(name string) func(r *http.Request) tower.Priority {
	option.PanicIf(name == "", "towerhttp.PriorityHeader: empty header name")
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) tower.Priority {
		v := r.Header[name]
		if len(v) == 0 {
			return tower.PriorityNormal
		}
		p, _ := tower.ParsePriority(v[0])
		return p
	}
}

// newHandler returns a Handler without its service.
func newHandler(fn string, opts []HandlerOption) *Handler {
	h := &Handler{handlerOptions: handlerOptions{retryAfter: DefaultRetryAfter, maxBody: -1, onError: WriteError}}
	option.Onto(fn, &h.handlerOptions, opts)
	if h.retryAfter > 0 {
		h.retryHeader = strconv.FormatInt(wholeSeconds(h.retryAfter), 10)
	}
	return h
}

// wholeSeconds returns d in whole seconds, rounded up, without overflow.
func wholeSeconds(d time.Duration) int64 {
	secs := int64(d / time.Second)
	if d%time.Second > 0 {
		secs++
	}
	return secs
}

// ServeHTTP serves r through the stack, as [Handler] says. A panic on r's
// goroutine goes on up once the layers have given back what they held. A
// *tower.PanicError a layer recovered on a goroutine of its own is logged
// and the response aborted, as net/http does for a handler's panic. A
// panic that broke the whole stack fails every request with 503, and is
// logged once.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.priority != nil {
		if p := h.priority(r); p != tower.PriorityNormal {
			r = r.WithContext(tower.WithPriority(r.Context(), p))
		}
	}
	if h.requests != nil {
		h.serveObserved(w, r)
		return
	}
	h.serve(w, r, nil)
}

// serve is ServeHTTP, telling o, if not nil, what happens to r.
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
		o.ex, ex.wantRoute = ex, true
	}
	if r.Body != nil && r.Body != http.NoBody {
		ex.body, ex.read = r.Body, r.Body
		if h.maxBody >= 0 {
			ex.read = http.MaxBytesReader(w, r.Body, h.maxBody)
		}
	}
	returned := false
	defer func() {
		if !returned { // a panic: a handler still running must not write
			ex.finish()
		}
	}()
	_, err = p.Call(ex, r)
	returned = true
	wrote, running := ex.finish()
	if o != nil {
		o.ended, o.err = true, err
	}
	if err == nil {
		return
	}
	if pe := tower.RequestPanic(err); pe != nil {
		abort(r, pe)
	}
	if ex.bodyTimedOut.Load() && errors.Is(err, context.Canceled) {
		err = errBodyDeadline // net/http cancels ctx when a read ends at the deadline
	}
	switch {
	case !wrote:
		h.fail(w, r, err, o)
	case running: // abandoned mid-response: break it rather than cut it short
		panic(http.ErrAbortHandler)
	}
}

// fail answers r with the error handler.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error, o *observation) {
	if h.retryHeader != "" && retryLater(err) {
		if d, ok := tower.RetryAfter(err); ok {
			w.Header().Set("Retry-After", strconv.FormatInt(wholeSeconds(d), 10))
		} else {
			w.Header().Set("Retry-After", h.retryHeader)
		}
	}
	h.logBroken(r, err)
	if o == nil {
		h.onError(w, r, err)
		return
	}
	o.ended, o.err = true, err
	rec := recorders.Get().(*exchange)
	rec.w = w
	defer func() {
		o.status = int(rec.status.Load())
		*rec = exchange{}
		recorders.Put(rec)
	}()
	h.onError(rec, r, err)
}

// HandlerService returns h as the leaf of a server stack: a Service,
// always ready, that runs h for each request under the call's context,
// and panics if not called under a [Handler]. Reads of the body end at the
// context's deadline with an error that wraps os.ErrDeadlineExceeded. The
// call returns a [Response] with the status h sent, and no error, unless
// h wrote nothing and its context had ended (the context's error), a read
// of its body ended at the deadline (an error that wraps
// context.DeadlineExceeded), or its body hit [WithMaxBodyBytes] (the
// *http.MaxBytesError).
func HandlerService(h http.Handler) tower.Service[*http.Request, Response] {
	option.PanicIf(isnil.Is(h), "towerhttp.HandlerService: nil http.Handler")
	return tower.ServiceFunc[*http.Request, Response](func(ctx context.Context, r *http.Request) (Response, error) {
		ex, _ := ctx.Value(exchangeKey{}).(*exchange)
		if ex == nil {
			panic("towerhttp: a HandlerService was called outside a towerhttp.Handler")
		}
		gov := ctx // the handler's context
		if ctx == context.Context(ex) {
			gov = ex.Context
		}
		if ex.body != nil && sameBody(r.Body, ex.body) && (ex.bound(r, gov) || ex.read != ex.body) {
			r = r.WithContext(gov)
			r.Body = requestBody{ex}
		} else if r.Context() != gov {
			r = r.WithContext(gov)
		}
		ex.running.Add(1)
		defer ex.running.Add(-1)
		h.ServeHTTP(ex, r)
		if ex.wantRoute {
			ex.mu.Lock()
			ex.routed, ex.pattern = true, r.Pattern
			ex.mu.Unlock()
		}
		return ex.result(gov)
	})
}

// abort ends the response to r as net/http ends one whose handler
// panicked.
func abort(r *http.Request, pe *tower.PanicError) {
	if pe.Value != any(http.ErrAbortHandler) {
		logf(r, "http: panic serving %v: %v\n%s", r.RemoteAddr, pe.Value, pe.Stack)
	}
	panic(http.ErrAbortHandler)
}

// logBroken logs the panic err carries, if any, the first time it is met:
// one that broke the stack fails every request.
func (h *Handler) logBroken(r *http.Request, err error) {
	var pe *tower.PanicError
	if !errors.As(err, &pe) || h.logged.Swap(pe) == pe {
		return
	}
	logf(r, "towerhttp: serving %v: %v\n%s", r.RemoteAddr, err, pe.Stack)
}

// logf logs as net/http does.
func logf(r *http.Request, format string, args ...any) {
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.ErrorLog != nil {
		srv.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}
