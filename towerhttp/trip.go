package towerhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// trip is one request going through a client stack: the context of the
// stack's Ready and Call, through which the leaf finds it, and the record
// of the responses the leaf got. It is never reused: a context derived
// from it may outlive the request.
type trip struct {
	context.Context               // the request's own
	req             *http.Request // the request given to RoundTrip
	sent            atomic.Bool   // req reached the base, which closes its body

	mu    sync.Mutex
	ended bool // the stack has answered: later responses are discarded at once
	first *http.Response
	more  []*http.Response
}

// tripKey is the context key of a trip.
type tripKey struct{}

func (t *trip) Value(key any) any {
	if key == (tripKey{}) {
		return t
	}
	return t.Context.Value(key)
}

func tripFrom(ctx context.Context) *trip {
	t, _ := ctx.Value(tripKey{}).(*trip)
	return t
}

var errNoResponse = errors.New("towerhttp: the stack returned no response and no error")

// errLate is the error of a response the leaf got after the stack had
// answered.
var errLate = errors.New("towerhttp: response after the round trip ended")

// roundTrip sends req through svc under ctx, made from req's context.
func roundTrip(ctx context.Context, svc tower.Service[*http.Request, *http.Response], req *http.Request) (resp *http.Response, err error) {
	t := &trip{Context: ctx, req: req}
	defer func() { resp, err = t.end(resp, err) }() // even on a panic
	p, err := svc.Ready(t)
	if err != nil {
		return nil, err
	}
	return p.Call(t, req)
}

// add records resp, which the leaf got, and returns it, or discards it
// once the trip has ended.
func (t *trip) add(resp *http.Response) (*http.Response, error) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		discard(resp)
		return nil, errLate
	}
	if t.first == nil {
		t.first = resp
	} else {
		t.more = append(t.more, resp)
	}
	t.mu.Unlock()
	return resp, nil
}

// discard drains and closes resp, a retried attempt's response, now, and
// the trip, if there is one, forgets it if it is the first; end closes one
// among the others again, which does nothing.
func (t *trip) discard(resp *http.Response) {
	if t != nil {
		t.mu.Lock()
		if t.first == resp {
			t.first = nil
		}
		t.mu.Unlock()
	}
	discard(resp)
}

// end takes the stack's answer and discards every response the leaf got
// but the one returned, unless that one is not the leaf's. It closes the
// request's body if no attempt sent it.
func (t *trip) end(resp *http.Response, err error) (*http.Response, error) {
	if err == nil && resp == nil {
		err = errNoResponse
	}
	if err != nil {
		resp = nil
	}
	t.mu.Lock()
	t.ended = true
	first, more := t.first, t.more
	t.first, t.more = nil, nil
	t.mu.Unlock()
	if !t.sent.Load() {
		defer closeBody(t.req) // even if the Close of a response's body panics
	}
	if resp == nil || resp == first || slices.Contains(more, resp) {
		if first != nil && first != resp {
			guard.Undo(func() { discard(first) }, func() { discardAll(more, resp) })
		}
		discardAll(more, resp)
	}
	return resp, err
}

// discardAll discards each response of rs but keep, even if a Close panics.
func discardAll(rs []*http.Response, keep *http.Response) {
	guard.Each(rs, func(r *http.Response) {
		if r != keep {
			discard(r)
		}
	})
}

// maxDrain is the longest declared body a discarded response has
// drained: one that short has most likely arrived with the headers.
const maxDrain = 4 << 10

func discard(resp *http.Response) {
	if resp.Body == nil {
		return
	}
	if resp.ContentLength >= 0 && resp.ContentLength <= maxDrain {
		io.CopyN(io.Discard, resp.Body, maxDrain)
	}
	resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body.Close()
	}
}

// leaf is the innermost service of a client stack, through its call.
type leaf struct {
	base   http.RoundTripper
	target *url.URL // nil: the request's own URL
	host   string   // "": the request's own Host
}

func (l *leaf) call(ctx context.Context, req *http.Request) (*http.Response, error) {
	t := tripFrom(ctx)
	if t == nil {
		panic("towerhttp: a transport's stack was called outside its RoundTrip")
	}
	if req == t.req {
		t.sent.Store(true)
	}
	out := req
	if l.target != nil {
		out = new(http.Request)
		*out = *req
		u := *req.URL
		u.Scheme, u.Host = l.target.Scheme, l.target.Host
		out.URL = &u
		switch {
		case l.host != "":
			out.Host = l.host
		case out.Host == "":
			out.Host = req.URL.Host
		}
	}
	if ctx == context.Context(t) && req.Context() == t.Context { // no layer's context
		resp, err := l.base.RoundTrip(out)
		if err != nil {
			return nil, err
		}
		return t.add(resp)
	}
	return l.detached(ctx, t, out)
}

// detached sends req under a context that follows ctx, the call's, until
// the headers are in, and then the request's own until the body is
// closed: a layer's context ends when its call returns.
func (l *leaf) detached(ctx context.Context, t *trip, req *http.Request) (*http.Response, error) {
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	var (
		resp *http.Response
		err  error
	)
	guard.Undo(func() { resp, err = l.base.RoundTrip(req.WithContext(actx)) }, func() {
		stop()
		cancel(nil)
	})
	stop()
	if err != nil {
		cancel(nil)
		return nil, err
	}
	user := t.Context
	stopBody := context.AfterFunc(user, func() { cancel(context.Cause(user)) })
	resp.Body = wrapBody(resp.Body, false, func() {
		stopBody()
		cancel(nil)
	})
	return t.add(resp)
}

// body is a response body that calls done once, when it is closed (even
// if Close panics) or, if atEOF, read to its end.
type body struct {
	rc    io.ReadCloser
	atEOF bool
	done  func()
	once  sync.Once
}

// rwBody is a writable body, of a 101 Switching Protocols response.
type rwBody struct{ *body }

func (b rwBody) Write(p []byte) (int, error) { return b.rc.(io.Writer).Write(p) }

func wrapBody(rc io.ReadCloser, atEOF bool, done func()) io.ReadCloser {
	b := &body{rc: rc, atEOF: atEOF, done: done}
	if _, ok := rc.(io.Writer); ok {
		return rwBody{b}
	}
	return b
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF && b.atEOF {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *body) Close() error {
	defer b.once.Do(b.done)
	return b.rc.Close()
}
