// Package h1 is the proxy's HTTP/1.1 client for plain-TCP backends: an
// http.RoundTripper that writes a request and reads its response on the
// caller's goroutine, over a pool of keep-alive connections per backend.
//
// net/http's Transport hands each request to a goroutine that writes it
// and another that reads the response, and back; on a proxy whose
// backends answer in microseconds those hand-offs are a large part of
// its CPU. This one has none: a request costs the syscalls that move its
// bytes. What it does not take (TLS, h2c, an Upgrade, Expect:
// 100-continue, trailers, a body of unknown or large length, CONNECT) it
// passes to a fallback, an *http.Transport.
//
// It parses responses with net/http's own parser (http.ReadResponse), so
// framing (Content-Length, chunked, until close), and the refusal of a
// response framed two ways, are net/http's.
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// MaxBody is the largest request body the Transport sends itself: one it
// writes at once before it reads the response, which a loopback socket's
// buffer takes whole. Larger bodies, and bodies of unknown length, go to
// the fallback, which writes them while it reads the response.
const MaxBody = 64 << 10

// maxHeaderBytes bounds a response's status line and header (and of each
// 1xx before it), as net/http's MaxResponseHeaderBytes does.
const maxHeaderBytes = 1 << 20

// checkAfter is how long a connection may stay idle and be used without
// a look at whether its backend closed it, or sent it something unasked
// (a 408 as it closes, say), meanwhile. Under load a connection is used
// again within microseconds; a backend closes an idle one after seconds.
const checkAfter = time.Second

// max1xx is how many informational responses may come before the final
// one.
const max1xx = 8

// Transport sends HTTP/1.1 requests to plain-TCP backends. Its zero value
// is not usable; make one with New.
type Transport struct {
	fallback      http.RoundTripper
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle       int           // per backend
	idleTimeout   time.Duration // an idle connection older is closed, not used
	headerTimeout time.Duration // 0: none

	mu     sync.Mutex
	idle   map[string][]*conn // by host:port, the most recently used last
	closed bool
}

// Options are a Transport's settings.
type Options struct {
	// Dial opens a connection; nil uses a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdlePerHost is how many idle connections to a backend are kept
	// (at least 1).
	MaxIdlePerHost int
	// IdleTimeout is how long a connection may stay idle and still be
	// used (at least 1ns).
	IdleTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's header once
	// the request is written; 0 for none.
	ResponseHeaderTimeout time.Duration
}

// New returns a Transport that passes what it does not take to fallback.
// It panics if fallback is nil or an option is out of range.
func New(fallback http.RoundTripper, o Options) *Transport {
	switch {
	case fallback == nil:
		panic("h1.New: nil fallback")
	case o.MaxIdlePerHost < 1:
		panic(fmt.Sprintf("h1.New: MaxIdlePerHost %d, want at least 1", o.MaxIdlePerHost))
	case o.IdleTimeout <= 0:
		panic(fmt.Sprintf("h1.New: IdleTimeout %v, want more than 0", o.IdleTimeout))
	case o.ResponseHeaderTimeout < 0:
		panic(fmt.Sprintf("h1.New: ResponseHeaderTimeout %v, want at least 0", o.ResponseHeaderTimeout))
	}
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return &Transport{
		fallback: fallback, dial: dial, maxIdle: o.MaxIdlePerHost,
		idleTimeout: o.IdleTimeout, headerTimeout: o.ResponseHeaderTimeout,
		idle: make(map[string][]*conn),
	}
}

// takes reports whether the Transport sends req itself.
func takes(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.URL.Host == "" || req.Method == http.MethodConnect ||
		len(req.Trailer) > 0 || req.Header["Upgrade"] != nil || req.Header["Expect"] != nil {
		return false
	}
	if hasBody(req) {
		return req.ContentLength > 0 && req.ContentLength <= MaxBody
	}
	return true
}

// hasBody reports whether req has a body to send. A body of length 0 that
// is not http.NoBody is of unknown length, as net/http's client reads it.
func hasBody(req *http.Request) bool { return req.Body != nil && req.Body != http.NoBody }

// RoundTrip sends req and returns its response, as http.RoundTripper
// says. A connection that a backend closed while it was idle fails the
// first write or read on it; a request that can be sent again (see
// replayable) is then sent on a new connection.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("h1: nil Request.URL")
	}
	if !takes(req) {
		return t.fallback.RoundTrip(req)
	}
	if err := validate(req); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	addr := hostPort(req)
	for {
		c, err := t.get(ctx, addr)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		res, err := c.roundTrip(t, req)
		if err == nil {
			return res, nil
		}
		if !c.reused || c.got > 0 || c.bodyFailed || ctx.Err() != nil || !replayable(req) {
			closeBody(req)
			return nil, err
		}
		// The backend closed an idle connection: send it again, on a
		// connection from the pool or a new one.
		if hasBody(req) {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// replayable reports whether req may be sent again after a reused
// connection failed before any of its response came: it is idempotent
// (by method, or an Idempotency-Key as net/http reads one) and its body,
// if any, can be had again.
func replayable(req *http.Request) bool {
	if hasBody(req) && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, k := req.Header["Idempotency-Key"]
	_, xk := req.Header["X-Idempotency-Key"]
	return k || xk
}

// validate refuses a request whose method, target or header would let a
// byte of it be read as the start of another: the checks net/http's
// client makes as it writes one.
func validate(req *http.Request) error {
	m := req.Method
	if m != "" && !httpguts.ValidHeaderFieldName(m) { // a method is a token
		return fmt.Errorf("h1: invalid method %q", m)
	}
	if !httpguts.ValidHostHeader(host(req)) {
		return errors.New("h1: invalid Host header")
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("h1: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("h1: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

func host(req *http.Request) string {
	if req.Host != "" {
		return req.Host
	}
	return req.URL.Host
}

// hostPort is the address req goes to: its URL's host, port 80 if it has
// none.
func hostPort(req *http.Request) string {
	if req.URL.Port() != "" {
		return req.URL.Host
	}
	return net.JoinHostPort(req.URL.Hostname(), "80")
}

// closeRequested reports whether req asks for its connection to be closed
// after it.
func closeRequested(req *http.Request) bool {
	return req.Close || httpguts.HeaderValuesContainsToken(req.Header["Connection"], "close")
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// get returns an idle connection to addr, the most recently used, or a
// new one.
func (t *Transport) get(ctx context.Context, addr string) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := time.Now()
	t.mu.Lock()
	for cs := t.idle[addr]; len(cs) > 0; cs = t.idle[addr] {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[addr] = cs[:len(cs)-1]
		if idle := now.Sub(c.idleSince); idle < t.idleTimeout {
			t.mu.Unlock()
			if idle < checkAfter || alive(c.nc) {
				c.reused, c.got, c.bodyFailed = true, 0, false
				return c, nil
			}
			c.nc.Close()
			t.mu.Lock()
			continue
		}
		c.nc.Close()
	}
	t.mu.Unlock()
	nc, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	c := &conn{nc: nc, addr: addr}
	c.br = bufio.NewReaderSize(&c.lr, 4<<10)
	c.bw = bufio.NewWriterSize(nc, 4<<10)
	c.lr.c = c
	return c, nil
}

// put keeps c for the next request to its backend, or closes it if the
// pool is full or closed.
func (t *Transport) put(c *conn) {
	if c.br.Buffered() > 0 { // bytes after the response: not an answer to anything
		c.nc.Close()
		return
	}
	c.idleSince = time.Now()
	t.mu.Lock()
	if cs := t.idle[c.addr]; !t.closed && len(cs) < t.maxIdle {
		t.idle[c.addr] = append(cs, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.nc.Close()
}

// CloseIdleConnections closes the idle connections, and the fallback's.
// Connections in use are closed when their responses are done.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = make(map[string][]*conn)
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	if ci, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// Close closes the idle connections and keeps none from now on.
func (t *Transport) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.CloseIdleConnections()
}

// conn is a connection to a backend, and the state of the request on it.
type conn struct {
	nc         net.Conn
	addr       string
	br         *bufio.Reader // reads through lr
	bw         *bufio.Writer
	lr         limitedReader
	reused     bool      // it served a request before this one
	got        int64     // bytes of this request's response read
	bodyFailed bool      // reading this request's body failed: the sender's fault, not the connection's
	idleSince  time.Time // when it was last put back
}

// limitedReader reads from its conn's net.Conn, at most n bytes while n
// is at least 0, and counts what it read.
type limitedReader struct {
	c *conn
	n int64 // < 0: no limit
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n == 0 {
		return 0, errHeaderTooLarge
	}
	if l.n > 0 && int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.c.nc.Read(p)
	l.c.got += int64(n)
	if l.n > 0 {
		l.n -= int64(n)
	}
	return n, err
}

var (
	errHeaderTooLarge = errors.New("h1: a response's header is larger than 1 MiB")
	errHeaderTimeout  = errors.New("h1: timeout awaiting response headers")
	errTooMany1xx     = errors.New("h1: too many 1xx responses")
	errShortBody      = errors.New("h1: request body shorter than its ContentLength")
	err101            = errors.New("h1: 101 Switching Protocols to a request without Upgrade")
)

// aLongTimeAgo is a deadline in the past: setting it fails a read or a
// write in progress on the connection at once.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip writes req on c and reads its response. On an error it closes
// c; on success c goes back to t's pool once the response's body is read
// to its end (at once, for a response without one).
func (c *conn) roundTrip(t *Transport, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// A ctx that ends fails the connection's I/O in progress, until the
	// response is done.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		if !stop() { // ctx ended: wait for nothing, say why
			err = ctx.Err()
		}
		c.nc.Close()
		return nil, err
	}
	if err := c.write(req); err != nil {
		return fail(err)
	}
	if t.headerTimeout > 0 {
		c.nc.SetReadDeadline(time.Now().Add(t.headerTimeout))
	}
	res, err := c.readHeader(req)
	if err != nil {
		var ne net.Error
		if t.headerTimeout > 0 && errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			err = errHeaderTimeout
		}
		return fail(err)
	}
	if t.headerTimeout > 0 {
		c.nc.SetReadDeadline(time.Time{})
		if ctx.Err() != nil {
			// ctx ended as the header came: the deadline just cleared may
			// have been the one its AfterFunc set.
			c.nc.SetDeadline(aLongTimeAgo)
		}
	}
	keep := !res.Close && !closeRequested(req)
	if res.Body == http.NoBody {
		if stop() && keep {
			t.put(c)
		} else {
			c.nc.Close()
		}
		return res, nil
	}
	res.Body = &body{rc: res.Body, c: c, t: t, stop: stop, keep: keep, ctx: ctx}
	return res, nil
}

// write writes req's request line, header and body.
func (c *conn) write(req *http.Request) error {
	w := c.bw
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host(req))
	w.WriteString("\r\n")
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
			continue
		case "User-Agent":
			if len(vs) > 0 && vs[0] == "" { // "" asks for none, as net/http reads it
				continue
			}
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if closeRequested(req) {
		w.WriteString("Connection: close\r\n")
	}
	body := hasBody(req)
	switch {
	case body:
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(req.ContentLength, 10))
		w.WriteString("\r\n")
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		w.WriteString("Content-Length: 0\r\n")
	}
	w.WriteString("\r\n")
	if body {
		src := &bodySource{r: io.LimitReader(req.Body, req.ContentLength)}
		n, err := io.Copy(w, src)
		req.Body.Close()
		c.bodyFailed = src.err != nil || err == nil && n < req.ContentLength
		if err != nil {
			return err
		}
		if n < req.ContentLength {
			return errShortBody
		}
	}
	return w.Flush()
}

// bodySource reads a request's body, and keeps the error of a read that
// failed, to tell it from a failed write to the connection.
type bodySource struct {
	r   io.Reader
	err error
}

func (b *bodySource) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readHeader reads req's response up to its body, passing 1xx responses
// before it to the trace of req's context, if it has one for them.
func (c *conn) readHeader(req *http.Request) (*http.Response, error) {
	defer func() { c.lr.n = -1 }()
	trace := httptrace.ContextClientTrace(req.Context())
	for range max1xx + 1 {
		c.lr.n = maxHeaderBytes - int64(c.br.Buffered())
		res, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		switch code := res.StatusCode; {
		case code == http.StatusSwitchingProtocols:
			res.Body.Close()
			return nil, err101
		case code >= 100 && code < 200:
			if trace != nil && trace.Got1xxResponse != nil {
				if err := trace.Got1xxResponse(code, textproto.MIMEHeader(res.Header)); err != nil {
					return nil, err
				}
			}
			continue
		}
		return res, nil
	}
	return nil, errTooMany1xx
}

// body is a response's body. Read to its end, it gives the connection back
// to the pool; closed before, it closes the connection, as the rest of the
// response is still on it. Close may come from another goroutine than
// Read's: it then fails the Read in progress.
type body struct {
	rc    io.ReadCloser
	c     *conn
	t     *Transport
	ctx   context.Context
	stop  func() bool
	keep  bool         // the connection may serve another request
	state atomic.Int32 // reading, or what ended it
}

// A body's states.
const (
	reading = iota
	atEOF   // read to its end
	failed  // a read failed, or Close came first
)

var errBodyClosed = errors.New("h1: read on a closed response body")

func (b *body) Read(p []byte) (int, error) {
	switch b.state.Load() {
	case atEOF:
		return 0, io.EOF
	case failed:
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		if b.state.CompareAndSwap(reading, atEOF) {
			if b.stop() && b.keep {
				b.t.put(b.c)
			} else {
				b.c.nc.Close()
			}
		}
	case err != nil:
		if b.state.CompareAndSwap(reading, failed) {
			if !b.stop() {
				err = b.ctx.Err()
			}
			b.c.nc.Close()
		}
	}
	return n, err
}

func (b *body) Close() error {
	if b.state.CompareAndSwap(reading, failed) {
		b.stop()
		b.c.nc.Close()
	}
	return nil
}
