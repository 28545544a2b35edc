package towerhttp

import (
	"errors"
	"log"
	"net/http"

	"github.com/towergo/tower"
)

// requestPanic returns the *tower.PanicError err carries if the panic is
// the request's own (the handler's, recovered by a Timeout in Abandon
// mode), or nil. A panic wrapped by an error that answers
// tower.IsUnavailable (a [ReadyError], a failed Buffer's) broke the whole
// stack instead, which answers 503.
func requestPanic(err error) *tower.PanicError {
	pe, ok := errors.AsType[*tower.PanicError](err)
	if !ok || brokeStack(err, pe) {
		return nil
	}
	return pe
}

// brokeStack reports whether pe, which err carries, is wrapped by an error
// of err's chain that says the service is unavailable: the panic broke it.
func brokeStack(err error, pe *tower.PanicError) bool {
	u, ok := errors.AsType[interface {
		error
		Unavailable() bool
	}](err)
	return ok && u.Unavailable() && errors.Is(u, pe)
}

// abort ends the response to r as net/http ends one whose handler
// panicked: it logs pe as net/http would (not if its value is
// http.ErrAbortHandler), and panics with http.ErrAbortHandler, which makes
// net/http close the connection without logging it again.
func abort(r *http.Request, pe *tower.PanicError) {
	if pe.Value != any(http.ErrAbortHandler) {
		logf(r, "http: panic serving %v: %v\n%s", r.RemoteAddr, pe.Value, pe.Stack)
	}
	panic(http.ErrAbortHandler)
}

// logBroken logs the panic that broke the stack, if err carries one, the
// first time it is met: the stack then fails every request with it, and
// the error handler still gets it each time.
func (h *Handler) logBroken(r *http.Request, err error) {
	var pe *tower.PanicError
	if !errors.As(err, &pe) || h.logged.Swap(pe) == pe {
		return
	}
	logf(r, "towerhttp: serving %v: %v\n%s", r.RemoteAddr, err, pe.Stack)
}

// logf logs through r's server's ErrorLog, or package log's standard
// logger, as net/http does.
func logf(r *http.Request, format string, args ...any) {
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.ErrorLog != nil {
		srv.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}
