package towerhttp

import (
	"errors"
	"log"
	"net/http"

	"github.com/towergo/tower"
)

// requestPanic returns the *tower.PanicError err reports, a panic in user
// code that a layer recovered on a goroutine of its own while serving the
// request (the handler, in a Timeout's Abandon mode), or nil. A panic that
// broke the whole stack, which an error that answers tower.IsUnavailable
// wraps (a [ReadyError], a failed Buffer's), is not the request's: the
// stack cannot take requests, and says so with 503.
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
// panicked: it logs the panic with its stack, as net/http formats it, and
// panics with http.ErrAbortHandler, which makes net/http close the
// connection without logging it a second time. A panic with
// http.ErrAbortHandler itself is not logged, as net/http does not log it.
func abort(r *http.Request, pe *tower.PanicError) {
	if pe.Value != any(http.ErrAbortHandler) {
		logf(r, "http: panic serving %v: %v\n%s", r.RemoteAddr, pe.Value, pe.Stack)
	}
	panic(http.ErrAbortHandler)
}

// logBroken logs the panic that err carries, if any, when it is not the
// request's own (see requestPanic): a panic that broke the stack, which
// then fails every request the same way. Each such panic is logged once,
// the first time it is met; the error handler still gets it with every
// request.
func (h *Handler) logBroken(r *http.Request, err error) {
	var pe *tower.PanicError
	if !errors.As(err, &pe) || h.logged.Swap(pe) == pe {
		return
	}
	logf(r, "towerhttp: serving %v: %v\n%s", r.RemoteAddr, err, pe.Stack)
}

// logf logs through the error log of r's server, or the log package's
// standard logger if it has none, as net/http logs.
func logf(r *http.Request, format string, args ...any) {
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.ErrorLog != nil {
		srv.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}
