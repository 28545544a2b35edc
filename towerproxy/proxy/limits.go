package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/towerhttp"
)

// The limits on what a client may send, and for how long, are the
// http.Server's and the admission Handler's:
//
//   - a header longer than Bounds.MaxHeaderBytes is answered 431 Request
//     Header Fields Too Large by net/http (which reads up to 4KiB more
//     than the bound before it gives up, on HTTP/1);
//   - a body longer than Bounds.MaxBodyBytes is answered 413 Content Too
//     Large: at once if its Content-Length says so (towerhttp's
//     WithMaxBodyBytes), or when the proxy has read that much of it on
//     its way upstream (the backend's request is then cut, and the
//     client gets the 413 unless the backend answered first);
//   - a header that takes longer than Bounds.ReadHeaderTimeout to arrive
//     (slowloris) closes the connection, and so does a kept-alive
//     connection idle longer than Bounds.IdleTimeout;
//   - a body whose next bytes take longer than Bounds.BodyTimeout to
//     arrive is answered 408 Request Timeout and its connection closed
//     (clientBody), as nginx's client_body_timeout does: a whole bound on
//     the body would cut a large upload on a slow link that is making
//     progress, while a client that trickles its body holds a backend's
//     connection and the limits' permits for as long as it likes;
//   - a body that is malformed (a bad chunk) or breaks off is answered
//     400 Bad Request, and no backend is blamed for it.

// errClientBody is wrapped by the errors of reading a request's body
// from the client: a body that breaks off (the client went away), that
// is malformed (a bad chunk), or whose next bytes do not come in time
// (errSlowBody). They are the client's doing: the request is answered
// 400 (or 408), and the backend it was on its way to is not blamed for
// it (backendFailed).
var errClientBody = errors.New("proxy: reading the request body from the client")

// errSlowBody is the error of a read of a request's body whose next
// bytes did not arrive within the body timeout.
var errSlowBody = fmt.Errorf("%w: nothing came within the body timeout", errClientBody)

// clientBody is a request body as the proxy reads it from the client: its
// read errors wrap errClientBody, and, with a body timeout, every read
// must end within d: a read deadline is set on the connection (the
// stream, on HTTP/2) before each read, and cleared after it, so that
// net/http's own wait for the client, once the body is read, is not cut
// short by it. Once the handler has returned (end), the connection is
// net/http's again, and the deadline is left alone. It costs one
// allocation per request with a body.
type clientBody struct {
	rc   io.ReadCloser
	rw   interface{ SetReadDeadline(time.Time) error } // nil: no body timeout
	d    time.Duration
	conn *connState // the HTTP/1 connection's, if the server keeps one

	mu    sync.Mutex
	ended bool
}

// newClientBody returns r's body as a clientBody, with the body timeout d
// if d is positive and w can set read deadlines.
func newClientBody(w http.ResponseWriter, r *http.Request, d time.Duration) *clientBody {
	b := &clientBody{rc: r.Body, d: d}
	if d > 0 {
		b.rw, _ = readDeadliner(w)
	}
	if r.ProtoMajor == 1 {
		b.conn, _ = r.Context().Value(connStateKey{}).(*connState)
	}
	return b
}

// connState is what the proxy keeps of an HTTP/1 connection: whether a
// read of a request's body on it ended at the body timeout. net/http
// cancels the request's context when a read from the connection fails,
// that one included, and the round trip may fail with the cancellation
// rather than with the body's error: without it, the proxy would take a
// slow client for one that has gone, and answer nothing (net/http then
// sends an empty 200). The Server's ConnContext gives each connection
// one, an allocation per connection.
type connState struct{ slowBody atomic.Bool }

type connStateKey struct{}

// withConnState is the Server's ConnContext.
func withConnState(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connStateKey{}, new(connState))
}

// slowBody reports whether a read of a request's body on r's HTTP/1
// connection ended at the body timeout.
func slowBody(r *http.Request) bool {
	c, _ := r.Context().Value(connStateKey{}).(*connState)
	return r.ProtoMajor == 1 && c != nil && c.slowBody.Load()
}

// readDeadliner returns w, or the writer it unwraps to, that has
// SetReadDeadline: net/http's own writers do, for HTTP/1 and HTTP/2.
func readDeadliner(w http.ResponseWriter) (interface{ SetReadDeadline(time.Time) error }, bool) {
	for {
		switch t := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			return t, true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil, false
		}
	}
}

// Read reads the body, within the body timeout if there is one.
func (b *clientBody) Read(p []byte) (int, error) {
	armed := false
	if b.rw != nil {
		b.mu.Lock()
		if armed = !b.ended; armed {
			b.rw.SetReadDeadline(time.Now().Add(b.d))
		}
		b.mu.Unlock()
	}
	n, err := b.rc.Read(p)
	timedOut := armed && err != nil && errors.Is(err, os.ErrDeadlineExceeded)
	if armed && !timedOut {
		// A deadline that passed stays, so that what net/http reads of
		// the rest of the body fails at once too, and it closes the
		// connection.
		b.mu.Lock()
		if !b.ended {
			b.rw.SetReadDeadline(time.Time{})
		}
		b.mu.Unlock()
	}
	switch {
	case err == nil || err == io.EOF:
		return n, err
	case timedOut:
		if b.conn != nil {
			b.conn.slowBody.Store(true) // the connection is done for
		}
		return n, fmt.Errorf("%w (%v): %w", errSlowBody, b.d, err)
	}
	return n, fmt.Errorf("%w: %w", errClientBody, err)
}

// Close closes the body.
func (b *clientBody) Close() error { return b.rc.Close() }

// end marks the handler returned: later reads set no deadline.
func (b *clientBody) end() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
}

// backendFailed is the classifier of an upstream's outlier detection:
// towerhttp.Failure, but for the errors of reading the client's body,
// which are the client's and not the backend's.
func backendFailed(res *http.Response, err error) bool {
	return towerhttp.Failure(res, err) && !errors.Is(err, errClientBody)
}
