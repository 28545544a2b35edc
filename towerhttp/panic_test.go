package towerhttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// onItsOwn is a layer that runs the call below it on a goroutine of its
// own and returns a panic there as a *tower.PanicError, as a Timeout in
// Abandon mode does.
var onItsOwn = tower.LayerFunc[*http.Request, towerhttp.Response](func(inner tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
	return tower.ServiceFunc[*http.Request, towerhttp.Response](func(ctx context.Context, r *http.Request) (towerhttp.Response, error) {
		type result struct {
			res towerhttp.Response
			err error
		}
		done := make(chan result, 1)
		go func() {
			var res result
			if pe := guard.Call("the handler, on a test layer's goroutine", func() { res.res, res.err = tower.Call(ctx, inner, r) }); pe != nil {
				res.err = pe
			}
			done <- res
		}()
		res := <-done
		return res.res, res.err
	})
})

// panicking is a handler that panics with v.
func panicking(v any) http.Handler {
	return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(v) })
}

// serveLogged serves r with h, whose server logs to a buffer, and returns
// what ServeHTTP panicked with and what was logged.
func serveLogged(h http.Handler, r *http.Request) (panicked any, logged string) {
	var buf bytes.Buffer
	srv := &http.Server{ErrorLog: log.New(&buf, "", 0)}
	r = r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, srv))
	func() {
		defer func() { panicked = recover() }()
		h.ServeHTTP(httptest.NewRecorder(), r)
	}()
	return panicked, buf.String()
}

// A handler's panic that a layer returns as a *tower.PanicError is logged
// through the server's error log as net/http logs a handler's panic, with
// the panic's own stack, and the response is aborted with
// http.ErrAbortHandler, which net/http does not log again. A panic with
// http.ErrAbortHandler itself is not logged. The ConcurrencyLimit's
// permit is back.
func TestHandlerAbortsOnPanicError(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value any
		log   bool
	}{
		{"value", "boom", true},
		{"ErrAbortHandler", http.ErrAbortHandler, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var fail atomic.Bool
			fail.Store(true)
			h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if fail.Load() {
					panic(tt.value)
				}
				io.WriteString(w, "ok")
			}), tower.Stack(onItsOwn, limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1)))
			r := httptest.NewRequest("GET", "/", nil)
			panicked, logged := serveLogged(h, r)
			if panicked != http.ErrAbortHandler {
				t.Errorf("ServeHTTP panicked with %v, want http.ErrAbortHandler", panicked)
			}
			prefix := "http: panic serving 192.0.2.1:1234: boom\n"
			switch {
			case !tt.log && logged != "":
				t.Errorf("logged %q, want nothing", logged)
			case tt.log && (!strings.HasPrefix(logged, prefix) || !strings.Contains(logged, "TestHandlerAbortsOnPanicError")):
				t.Errorf("logged %q, want %q and the stack of the panic", logged, prefix)
			}
			fail.Store(false)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != 200 || rec.Body.String() != "ok" {
				t.Errorf("the next request: got %d %q, want 200 %q", rec.Code, rec.Body.String(), "ok")
			}
		})
	}
}

// Without a server in the request's context, the panic goes to the log
// package's standard logger.
func TestHandlerPanicErrorWithoutServer(t *testing.T) {
	var buf bytes.Buffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	log.SetFlags(0)
	defer func() {
		log.SetOutput(out)
		log.SetFlags(flags)
	}()
	h := towerhttp.NewHandler(panicking("boom"), onItsOwn)
	towertest.Panics(t, http.ErrAbortHandler.Error(), func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	})
	if got := buf.String(); !strings.HasPrefix(got, "http: panic serving 192.0.2.1:1234: boom\n") {
		t.Errorf("logged %q, want net/http's line for the panic", got)
	}
}

// A stack broken for good by a panic (its Ready returns the PanicError)
// answers 503 with Retry-After, as any broken stack does, and logs the
// panic once, not once per request.
func TestHandlerLogsPanicThatBrokeStackOnce(t *testing.T) {
	pe := guard.Call("the inner service's Ready, on a test's goroutine", func() { panic("broken") })
	var errs []error
	h := towerhttp.NewServiceHandler(brokenStack{pe}, towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		errs = append(errs, err)
		towerhttp.WriteError(w, r, err)
	}))
	var logs []string
	for range 3 {
		var buf bytes.Buffer
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, &http.Server{ErrorLog: log.New(&buf, "", 0)}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("got %d, Retry-After %q; want 503, 1", rec.Code, rec.Header().Get("Retry-After"))
		}
		logs = append(logs, buf.String())
	}
	if !strings.HasPrefix(logs[0], "towerhttp: serving 192.0.2.1:1234: service not ready: tower: panic in the inner service's Ready, on a test's goroutine: broken\n") || logs[1] != "" || logs[2] != "" {
		t.Errorf("logged %q, want the panic once, with its stack", logs)
	}
	for _, err := range errs {
		var got *tower.PanicError
		if !errors.As(err, &got) || got != pe {
			t.Errorf("the error handler got %v, want the PanicError", err)
		}
	}
}

// brokenStack is a stack whose Ready fails with err, every time.
type brokenStack struct{ err error }

func (b brokenStack) Ready(context.Context) (tower.Permit[*http.Request, towerhttp.Response], error) {
	return tower.Permit[*http.Request, towerhttp.Response]{}, b.err
}

// bufferBrokenBy returns the error of a Buffer whose inner service's
// Ready fails with cause: a *buffer.ServiceError.
func bufferBrokenBy(t *testing.T, cause error) error {
	t.Helper()
	b := buffer.New[*http.Request, towerhttp.Response](brokenStack{cause}, 1)
	defer b.Close()
	_, err := tower.Call(t.Context(), b, httptest.NewRequest("GET", "/", nil))
	var failed *buffer.ServiceError
	if !errors.As(err, &failed) {
		t.Fatalf("got %v from a Buffer over a broken service, want a *buffer.ServiceError", err)
	}
	return err
}

func TestStatusCodeOfPanics(t *testing.T) {
	pe := func(v any) *tower.PanicError { return &tower.PanicError{Where: "a test", Value: v} }
	for _, tt := range []struct {
		name string
		err  error
		want int
		body string
	}{
		{"value", pe("boom"), 500, "Internal Server Error\n"},
		{"error that says overloaded", pe(loadshed.ErrOverloaded), 500, "Internal Server Error\n"},
		{"error that says too large", pe(&http.MaxBytesError{Limit: 1}), 500, "Internal Server Error\n"},
		{"wrapped", errors.Join(errors.New("x"), pe(context.Canceled)), 500, "Internal Server Error\n"},
		{"that broke the stack", &towerhttp.ReadyError{Err: pe("boom")}, 503, "service unavailable\n"},
		{"that broke a Buffer", bufferBrokenBy(t, pe("boom")), 503, "service unavailable\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := towerhttp.StatusCode(tt.err); got != tt.want {
				t.Errorf("StatusCode: got %d, want %d", got, tt.want)
			}
			rec := httptest.NewRecorder()
			towerhttp.WriteError(rec, httptest.NewRequest("GET", "/", nil), tt.err)
			if rec.Code != tt.want || rec.Body.String() != tt.body {
				t.Errorf("WriteError: got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.want, tt.body)
			}
		})
	}
}

// Over loopback, a Timeout in Abandon mode over a handler that panics:
// the server logs the panic once, as net/http logs a handler's, the client
// gets a broken response, and the permit is back for the next request.
func TestServerAbandonedHandlerPanics(t *testing.T) {
	checkGoroutines(t)
	var served atomic.Int32
	h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			panic("boom")
		}
		io.WriteString(w, "ok")
	}), tower.Stack(
		loadshed.NewLayer[*http.Request, towerhttp.Response](),
		timeout.NewLayer[*http.Request, towerhttp.Response](10*time.Second, timeout.WithMode(timeout.Abandon)),
		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1),
	))
	var logged lockedBuffer
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(&logged, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	if _, _, _, err := get(t.Context(), client, srv.URL); err == nil {
		t.Error("the request whose handler panicked got a response, want an error")
	}
	if code, _, body := mustGet(t, client, srv.URL); code != 200 || body != "ok" {
		t.Errorf("the next request: got %d %q, want 200 %q", code, body, "ok")
	}
	if got := logged.String(); strings.Count(got, "http: panic serving") != 1 || !strings.Contains(got, ": boom\n") {
		t.Errorf("the server logged %q, want the panic once", got)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
