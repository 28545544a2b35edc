package towerhttp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// exchange is one request being served by a Handler: the context the
// Handler passes to the stack's Call, through which the leaf finds it, and
// the ResponseWriter the handler writes to, which passes everything
// through to net/http's and tracks whether the status has been sent.
// Once the Handler has the stack's answer it finishes the exchange, after
// which a handler still running writes nowhere (see Handler); so each
// write takes the lock. An exchange is never reused: a context derived
// from it may outlive the request.
type exchange struct {
	context.Context // the request's own
	w               http.ResponseWriter

	// The request's body, when the Handler watches its reads (see
	// requestBody): body as the Handler got it, and read, where the
	// handler's reads go (body under http.MaxBytesReader with a limit).
	// Set before the stack is called; nil without a body.
	body, read io.ReadCloser

	// mu orders the handler's writes, and the read deadlines it sets, with
	// finish: nothing reaches net/http's writer, or its connection, once
	// finish has returned.
	mu       sync.Mutex
	deadline readDeadline
	finished bool // the Handler has the stack's answer

	status       atomic.Int32 // the status sent, or 0; set under mu
	running      atomic.Int32 // calls of the leaf that have not returned
	bodyTimedOut atomic.Bool  // a read of the body ended at the deadline
	tooLarge     atomic.Pointer[http.MaxBytesError]
	route        routeRecord // for the request metrics: see observe.go
}

// exchangeKey is the context key under which an exchange finds itself.
type exchangeKey struct{}

// Value returns the exchange itself for exchangeKey, so that the leaf finds
// it through contexts layers derived.
func (ex *exchange) Value(key any) any {
	if key == (exchangeKey{}) {
		return ex
	}
	return ex.Context.Value(key)
}

// exchangeFrom returns the exchange ctx is, or derives from, or nil.
func exchangeFrom(ctx context.Context) *exchange {
	if ex, ok := ctx.(*exchange); ok {
		return ex
	}
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

func (ex *exchange) enter() { ex.running.Add(1) }

func (ex *exchange) leave() { ex.running.Add(-1) }

// finish closes the writer to the handler, and reports whether the status
// was sent and whether a call of the handler is still running. It may be
// called more than once.
func (ex *exchange) finish() (wrote, running bool) {
	ex.mu.Lock()
	ex.finished = true
	ex.mu.Unlock()
	return ex.status.Load() != 0, ex.running.Load() > 0
}

// result is what the leaf returns once the handler has, with ctx the
// handler's context: see HandlerService.
func (ex *exchange) result(ctx context.Context) (Response, error) {
	if status := ex.status.Load(); status != 0 {
		return Response{StatusCode: int(status)}, nil
	}
	if ex.bodyTimedOut.Load() {
		// Before ctx: net/http cancels the request's context, which ctx
		// derives from, when the read fails.
		return Response{}, errBodyDeadline
	}
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	if tooLarge := ex.tooLarge.Load(); tooLarge != nil {
		return Response{}, tooLarge
	}
	return Response{StatusCode: http.StatusOK}, nil
}

// sent records that the status has gone out, as code if it is the first.
// ex.mu must be held.
func (ex *exchange) sent(code int) {
	if ex.status.Load() == 0 {
		ex.status.Store(int32(code))
	}
}

// Header returns the response's header map; once the exchange is
// finished, a map of its own that goes nowhere.
func (ex *exchange) Header() http.Header {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return http.Header{}
	}
	return ex.w.Header()
}

func (ex *exchange) WriteHeader(code int) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return
	}
	if code >= 200 { // 1xx are not the response's status
		ex.sent(code)
	}
	ex.w.WriteHeader(code)
}

func (ex *exchange) Write(p []byte) (int, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return 0, http.ErrHandlerTimeout
	}
	ex.sent(http.StatusOK)
	return ex.w.Write(p)
}

// ReadFrom keeps net/http's sendfile path for handlers that io.Copy a file.
func (ex *exchange) ReadFrom(src io.Reader) (int64, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return 0, http.ErrHandlerTimeout
	}
	ex.sent(http.StatusOK)
	if rf, ok := ex.w.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{ex.w}, src)
}

// writerOnly hides a ReadFrom method, so that io.Copy does not call it
// back.
type writerOnly struct{ io.Writer }

// Flush sends what the handler wrote so far, the status included.
func (ex *exchange) Flush() {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return
	}
	ex.sent(http.StatusOK)
	if f, ok := ex.w.(http.Flusher); ok {
		f.Flush()
		return
	}
	http.NewResponseController(ex.w).Flush()
}

// Hijack hands the connection to the handler; the Handler then writes
// nothing more on it.
func (ex *exchange) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return nil, nil, http.ErrHandlerTimeout
	}
	conn, rw, err := http.NewResponseController(ex.w).Hijack()
	if err == nil {
		ex.sent(http.StatusSwitchingProtocols)
	}
	return conn, rw, err
}

// Unwrap returns net/http's ResponseWriter, for http.ResponseController,
// which finds the exchange's own methods first.
func (ex *exchange) Unwrap() http.ResponseWriter { return ex.w }

// SetReadDeadline sets the body's read deadline, for
// http.ResponseController: the handler takes it over from the Handler (see
// bound). Once the exchange is finished, when the connection may serve
// another request, it returns http.ErrHandlerTimeout.
func (ex *exchange) SetReadDeadline(t time.Time) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return http.ErrHandlerTimeout
	}
	ex.deadline.on = false
	return http.NewResponseController(ex.w).SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline, for http.ResponseController,
// until the exchange is finished.
func (ex *exchange) SetWriteDeadline(t time.Time) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return http.ErrHandlerTimeout
	}
	return http.NewResponseController(ex.w).SetWriteDeadline(t)
}

// EnableFullDuplex lets the handler read the body while it writes, for
// http.ResponseController, until the exchange is finished.
func (ex *exchange) EnableFullDuplex() error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return http.ErrHandlerTimeout
	}
	return http.NewResponseController(ex.w).EnableFullDuplex()
}
