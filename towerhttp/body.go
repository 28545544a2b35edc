package towerhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// errReadDeadline is the error of a body read after the handler's deadline.
var errReadDeadline = fmt.Errorf("towerhttp: request body read after the handler's deadline: %w", os.ErrDeadlineExceeded)

// errBodyDeadline is the error of a call whose handler wrote nothing after
// a body read ended at its deadline.
var errBodyDeadline = fmt.Errorf("towerhttp: request body not received by the handler's deadline: %w", context.DeadlineExceeded)

// requestBody is the body a Handler gives its handler when it watches the
// reads. Its state is its exchange's, so that it goes in an interface
// without an allocation.
type requestBody struct{ ex *exchange }

// readDeadline is the body's read deadline (see bound), under ex.mu.
type readDeadline struct {
	at      time.Duration // a reading of package mono's clock: negative in a testing/synctest bubble
	perRead bool          // set around each read, not once for all
	on      bool          // the writer takes read deadlines, and the handler has not taken it over
}

// netHTTPBody is the type of net/http's HTTP/1 request body.
var netHTTPBody = sync.OnceValue(func() reflect.Type {
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")))
	if err != nil {
		return nil
	}
	return reflect.TypeOf(r.Body)
})

// unread reports whether r's body is net/http's own HTTP/1 body and
// nothing can have read it to its end.
func unread(r *http.Request) bool {
	return r.ProtoMajor == 1 && reflect.TypeOf(r.Body) == netHTTPBody() &&
		r.PostForm == nil && r.MultipartForm == nil
}

// sameBody reports whether a is b. A body of an incomparable type is
// taken for b if it has b's type.
func sameBody(a, b io.ReadCloser) bool {
	t := reflect.TypeOf(a)
	if t != reflect.TypeOf(b) {
		return false
	}
	return !t.Comparable() || a == b
}

// bound makes the deadline of gov, the handler's context, end the reads of
// r's body, and reports whether gov has one; a server with a ReadTimeout
// is left to it. The deadline is set once, now, on HTTP/2 (the stream's)
// and on an HTTP/1 body net/http has not read to its end (see unread). On
// any other it is set around each of the handler's reads: one left on the
// connection would end net/http's wait for the next request, and cancel
// that request's context.
func (ex *exchange) bound(r *http.Request, gov context.Context) bool {
	d, ok := gov.Deadline()
	if !ok {
		return false
	}
	if srv, _ := ex.Value(http.ServerContextKey).(*http.Server); srv != nil && srv.ReadTimeout > 0 {
		return false
	}
	at, ok := mono.Of(d)
	if !ok { // no monotonic reading
		at = mono.Now() + time.Until(d)
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.finished {
		return false
	}
	ex.deadline = readDeadline{at: at, perRead: r.ProtoMajor < 2 && !unread(r), on: readDeadlines(ex.w)}
	if ex.deadline.on && !ex.deadline.perRead {
		http.NewResponseController(ex.w).SetReadDeadline(d)
	}
	return true
}

// readDeadlines reports whether http.ResponseController can set w's read
// deadline, without the allocation of the controller's error if not.
func readDeadlines(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// armRead prepares a body read: it reports whether a deadline is in
// force, and whether the read must be followed by disarm. A per-read
// deadline that has passed is not set, as it would end a read net/http
// waits on. Nothing is set once the exchange is finished: net/http owns
// the connection again.
func (ex *exchange) armRead() (watched, armed bool, err error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	d := &ex.deadline
	if !d.on || ex.finished {
		return false, false, nil
	}
	if !d.perRead {
		return true, false, nil
	}
	if mono.Now() >= d.at {
		ex.bodyTimedOut.Store(true)
		return true, false, errReadDeadline
	}
	http.NewResponseController(ex.w).SetReadDeadline(mono.Time(d.at))
	return true, true, nil
}

// disarm clears the read deadline armRead set.
func (ex *exchange) disarm() {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if !ex.finished {
		http.NewResponseController(ex.w).SetReadDeadline(time.Time{})
	}
}

// Read reads the body, ending at the handler's deadline.
func (b requestBody) Read(p []byte) (int, error) {
	watched, armed, err := b.ex.armRead()
	if err != nil {
		return 0, err
	}
	n, err := b.ex.read.Read(p)
	timedOut := watched && err != nil && errors.Is(err, os.ErrDeadlineExceeded)
	if timedOut {
		b.ex.bodyTimedOut.Store(true)
	}
	if armed && !timedOut {
		b.ex.disarm()
	}
	if err != nil && err != io.EOF {
		if tooLarge, ok := errors.AsType[*http.MaxBytesError](err); ok {
			b.ex.tooLarge.Store(tooLarge)
		}
	}
	return n, err
}

func (b requestBody) Close() error { return b.ex.read.Close() }
