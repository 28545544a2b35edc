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

// exchange is one request being served by a Handler: the context of the
// stack's Call, through which the leaf finds it, and the handler's
// ResponseWriter, which writes nowhere once finished. It is never reused:
// a context derived from it may outlive the request (fail pools
// bare ones, used only as writers).
type exchange struct {
	context.Context // the request's own
	w               http.ResponseWriter

	// The request's body as the Handler got it, and where the handler's
	// reads go (under http.MaxBytesReader with a limit); nil without one.
	body, read io.ReadCloser

	// mu orders the handler's writes and read deadlines with finish:
	// nothing reaches net/http's writer once finish has returned.
	mu       sync.Mutex
	deadline readDeadline
	finished bool // the Handler has the stack's answer

	status       atomic.Int32 // the status sent, or 0; set under mu
	running      atomic.Int32 // calls of the leaf that have not returned
	bodyTimedOut atomic.Bool  // a read of the body ended at the deadline
	tooLarge     atomic.Pointer[http.MaxBytesError]

	// For the request metrics; routed and pattern under mu: the handler
	// has returned, having matched pattern in its ServeMux.
	wantRoute, routed bool
	pattern           string
}

// exchangeKey is the context key of an exchange.
type exchangeKey struct{}

func (ex *exchange) Value(key any) any {
	if key == (exchangeKey{}) {
		return ex
	}
	return ex.Context.Value(key)
}

// finish closes the writer, and reports whether the status was sent and
// whether a call of the handler is still running.
func (ex *exchange) finish() (wrote, running bool) {
	ex.mu.Lock()
	ex.finished = true
	ex.mu.Unlock()
	return ex.status.Load() != 0, ex.running.Load() > 0
}

// result is what the leaf returns, with ctx the handler's context.
func (ex *exchange) result(ctx context.Context) (Response, error) {
	if status := ex.status.Load(); status != 0 {
		return Response{StatusCode: int(status)}, nil
	}
	if ex.bodyTimedOut.Load() { // before ctx, which net/http cancels when the read fails
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

// sent records code as the status, if none was sent. ex.mu must be held.
func (ex *exchange) sent(code int) {
	if ex.status.Load() == 0 {
		ex.status.Store(int32(code))
	}
}

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

// writerOnly hides a ReadFrom method from io.Copy.
type writerOnly struct{ io.Writer }

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

func (ex *exchange) Hijack() (conn net.Conn, rw *bufio.ReadWriter, err error) {
	err = ex.control(func(w http.ResponseWriter) error {
		conn, rw, err = http.NewResponseController(w).Hijack()
		if err == nil {
			ex.sent(http.StatusSwitchingProtocols)
		}
		return err
	})
	return conn, rw, err
}

// Unwrap returns net/http's ResponseWriter, for http.ResponseController,
// which finds the exchange's own methods first.
func (ex *exchange) Unwrap() http.ResponseWriter { return ex.w }

// SetReadDeadline takes the body's read deadline over from the Handler.
func (ex *exchange) SetReadDeadline(t time.Time) error {
	return ex.control(func(w http.ResponseWriter) error {
		ex.deadline.on = false
		return http.NewResponseController(w).SetReadDeadline(t)
	})
}

func (ex *exchange) SetWriteDeadline(t time.Time) error {
	return ex.control(func(w http.ResponseWriter) error {
		return http.NewResponseController(w).SetWriteDeadline(t)
	})
}

func (ex *exchange) EnableFullDuplex() error {
	return ex.control(func(w http.ResponseWriter) error {
		return http.NewResponseController(w).EnableFullDuplex()
	})
}

// control calls f with net/http's writer under the lock, unless the
// exchange is finished: the connection may serve another request.
func (ex *exchange) control(f func(http.ResponseWriter) error) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return http.ErrHandlerTimeout
	}
	return f(ex.w)
}
