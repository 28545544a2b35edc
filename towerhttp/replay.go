package towerhttp

import (
	"io"
	"net/http"
	"sync"
)

// CloneRequest returns a copy of req that can be sent after req has been,
// for the Clone of a retry.Policy or hedge.Policy (see the Transport's
// example). A request without a body is always replayable; one with a body
// is if it has GetBody, as those of http.NewRequest over a bytes.Buffer,
// bytes.Reader or strings.Reader do. The copy's body calls GetBody when it
// is first read, so a copy never sent costs no body. For a body without
// GetBody, CloneRequest returns nil and false.
//
// The copy is shallow: it shares req's context, URL and header map, which
// the transports only read. A policy that changes the copy's headers or
// URL must clone them first (req.Header.Clone()).
func CloneRequest(req *http.Request) (*http.Request, bool) {
	replayable := req.Body == nil || req.Body == http.NoBody
	if !replayable && req.GetBody == nil {
		return nil, false
	}
	out := new(http.Request)
	*out = *req
	if !replayable {
		out.Body = &replayBody{get: req.GetBody}
	}
	return out, true
}

// replayBody is a request body made by GetBody when it is first read. A
// transport may close it from another goroutine than the one that reads.
type replayBody struct {
	get func() (io.ReadCloser, error)

	mu  sync.Mutex
	rc  io.ReadCloser
	err error
}

func (b *replayBody) open() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rc == nil && b.err == nil {
		b.rc, b.err = b.get()
	}
	return b.rc, b.err
}

func (b *replayBody) Read(p []byte) (int, error) {
	rc, err := b.open()
	if err != nil {
		return 0, err
	}
	return rc.Read(p)
}

func (b *replayBody) Close() error {
	b.mu.Lock()
	rc := b.rc
	if rc == nil && b.err == nil {
		b.err = http.ErrBodyReadAfterClose // never opened: nothing to close
	}
	b.mu.Unlock()
	if rc == nil {
		return nil
	}
	return rc.Close()
}
