package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
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
//     (pacedBody), as nginx's client_body_timeout does: a whole bound on
//     the body would cut a large upload on a slow link that is making
//     progress, while a client that trickles its body holds a backend's
//     connection and the limits' permits for as long as it likes.

// errSlowBody is the error of a read of a request's body whose next
// bytes did not arrive within the body timeout.
var errSlowBody = errors.New("proxy: the client sent nothing of the request body within the body timeout")

// pacedBody is a request body whose every read must end within d: a read
// deadline is set on the connection (the stream, on HTTP/2) before each
// read, and cleared after it, so that net/http's own wait for the
// client, once the body is read, is not cut short by it. Once the
// handler has returned (end), the connection is net/http's again, and
// the deadline is left alone.
type pacedBody struct {
	rc io.ReadCloser
	rw interface{ SetReadDeadline(time.Time) error }
	d  time.Duration

	mu    sync.Mutex
	ended bool
}

// pace returns r's body as a pacedBody of d if w can set read deadlines,
// or nil if it cannot (then the body is not paced).
func pace(w http.ResponseWriter, r *http.Request, d time.Duration) *pacedBody {
	rw, ok := readDeadliner(w)
	if !ok {
		return nil
	}
	return &pacedBody{rc: r.Body, rw: rw, d: d}
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

// Read reads the body within the body timeout; a read that does not end
// in time fails with an error that wraps errSlowBody.
func (b *pacedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	armed := !b.ended
	if armed {
		b.rw.SetReadDeadline(time.Now().Add(b.d))
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	if !armed {
		return n, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// The deadline stays, so that what net/http reads of the rest
		// of the body fails at once too, and it closes the connection.
		return n, fmt.Errorf("%w (%v): %w", errSlowBody, b.d, err)
	}
	if !b.ended {
		b.rw.SetReadDeadline(time.Time{})
	}
	return n, err
}

// Close closes the body.
func (b *pacedBody) Close() error { return b.rc.Close() }

// end marks the handler returned: later reads set no deadline.
func (b *pacedBody) end() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
}
