package towerhttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

func TestHandlerRetryAfterOption(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []towerhttp.HandlerOption
		want string
	}{
		{"default", nil, "1"},
		{"zero sends none", []towerhttp.HandlerOption{towerhttp.WithRetryAfter(0)}, ""},
		{"rounded up", []towerhttp.HandlerOption{towerhttp.WithRetryAfter(1500 * time.Millisecond)}, "2"},
		{"whole seconds", []towerhttp.HandlerOption{towerhttp.WithRetryAfter(30 * time.Second)}, "30"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shed := tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
				return towerhttp.Response{}, loadshed.ErrOverloaded
			})
			h := towerhttp.NewServiceHandler(shed, tt.opts...)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("got status %d, want 503", rec.Code)
			}
			if got, ok := rec.Header()["Retry-After"]; tt.want == "" && ok || tt.want != "" && (len(got) != 1 || got[0] != tt.want) {
				t.Errorf("got Retry-After %q, want %q", got, tt.want)
			}
		})
	}
}

// A request over its key's limit is answered 429 with the time until the
// key's next token as Retry-After, rounded up to whole seconds, in place of
// the Handler's fixed one; an error that says 0 gets the fixed one, and
// WithRetryAfter(0) sends none at all.
func TestHandlerRetryAfterOfError(t *testing.T) {
	for _, tt := range []struct {
		name string
		wait time.Duration
		opts []towerhttp.HandlerOption
		want string
	}{
		{"rounded up", 1500 * time.Millisecond, nil, "2"},
		{"a nanosecond", 1, nil, "1"},
		{"whole seconds", 30 * time.Second, []towerhttp.HandlerOption{towerhttp.WithRetryAfter(5 * time.Second)}, "30"},
		{"says nothing", 0, []towerhttp.HandlerOption{towerhttp.WithRetryAfter(5 * time.Second)}, "5"},
		{"none sent", time.Second, []towerhttp.HandlerOption{towerhttp.WithRetryAfter(0)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			limited := tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
				return towerhttp.Response{}, &limit.KeyLimitError{Wait: tt.wait}
			})
			rec := httptest.NewRecorder()
			towerhttp.NewServiceHandler(limited, tt.opts...).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != http.StatusTooManyRequests {
				t.Errorf("got status %d, want 429", rec.Code)
			}
			if got, ok := rec.Header()["Retry-After"]; tt.want == "" && ok || tt.want != "" && (len(got) != 1 || got[0] != tt.want) {
				t.Errorf("got Retry-After %q, want %q", got, tt.want)
			}
		})
	}
}

// An error the stack returns that says nothing known: 500, with the status
// text and not the error's message.
func TestHandlerUnknownError(t *testing.T) {
	failing := tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
		return towerhttp.Response{}, errors.New("db password is hunter2")
	})
	rec := httptest.NewRecorder()
	towerhttp.NewServiceHandler(failing).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 || rec.Body.String() != "Internal Server Error\n" || rec.Header().Get("Retry-After") != "" {
		t.Errorf("got %d %q Retry-After %q, want 500 %q and no Retry-After", rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"), "Internal Server Error\n")
	}
}

func TestHandlerConstructorsPanic(t *testing.T) {
	none := tower.Stack[*http.Request, towerhttp.Response]()
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"towerhttp.NewHandler: nil http.Handler", func() { towerhttp.NewHandler(nil, none) }},
		{"towerhttp.NewHandler: nil stack", func() { towerhttp.NewHandler(ok, nil) }},
		{"towerhttp.NewHandler: option 1 is nil", func() { towerhttp.NewHandler(ok, none, towerhttp.WithRetryAfter(0), nil) }},
		{"towerhttp.NewServiceHandler: nil Service", func() { towerhttp.NewServiceHandler(nil) }},
		{"towerhttp.NewServiceHandler: option 0 is nil", func() { towerhttp.NewServiceHandler(towerhttp.HandlerService(ok), nil) }},
		{"towerhttp.HandlerService: nil http.Handler", func() { towerhttp.HandlerService(nil) }},
		{"towerhttp.WithRetryAfter: d must not be negative, got -1s", func() { towerhttp.WithRetryAfter(-time.Second) }},
		{"towerhttp.WithMaxBodyBytes: n must be positive, got 0", func() { towerhttp.WithMaxBodyBytes(0) }},
		{"towerhttp.WithErrorHandler: nil function", func() { towerhttp.WithErrorHandler(nil) }},
		// Typed nils: a nil in an interface with a type.
		{"towerhttp.NewHandler: nil http.Handler", func() { towerhttp.NewHandler((*http.ServeMux)(nil), none) }},
		{"towerhttp.NewHandler: nil http.Handler", func() { towerhttp.NewHandler(http.HandlerFunc(nil), none) }},
		{"towerhttp.NewHandler: nil stack", func() { towerhttp.NewHandler(ok, tower.LayerFunc[*http.Request, towerhttp.Response](nil)) }},
		{"towerhttp.NewHandler: stack.Wrap returned nil", func() { towerhttp.NewHandler(ok, wrapsInNil) }},
		{"towerhttp.NewServiceHandler: nil Service", func() {
			towerhttp.NewServiceHandler(tower.ServiceFunc[*http.Request, towerhttp.Response](nil))
		}},
		{"towerhttp.HandlerService: nil http.Handler", func() { towerhttp.HandlerService(http.HandlerFunc(nil)) }},
	} {
		t.Run(tt.want, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// wrapsInNil is a layer that returns a typed nil service.
var wrapsInNil = tower.LayerFunc[*http.Request, towerhttp.Response](func(tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
	return (*nilService)(nil)
})

type nilService struct{}

func (*nilService) Ready(context.Context) (tower.Permit[*http.Request, towerhttp.Response], error) {
	panic("a nil service was used")
}

// A stack of no layers is no nil: it wraps the handler in nothing.
func TestHandlerEmptyStack(t *testing.T) {
	rec := httptest.NewRecorder()
	towerhttp.NewHandler(ok, tower.Stack[*http.Request, towerhttp.Response]()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || rec.Body.String() != "ok" {
		t.Errorf("got %d %q, want 200 %q", rec.Code, rec.Body.String(), "ok")
	}
}

func TestStatusCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{nil, 200},
		{&http.MaxBytesError{Limit: 10}, 413},
		{loadshed.ErrOverloaded, 503},
		{&towerhttp.ReadyError{Err: errors.New("x")}, 503},
		{buffer.ErrClosed, 503},
		{timeout.ErrElapsed, 503},
		{context.DeadlineExceeded, 503},
		{context.Canceled, 503},
		{errors.Join(errors.New("wrapped"), loadshed.ErrOverloaded), 503},
		{errors.New("anything else"), 500},
	} {
		if got := towerhttp.StatusCode(tt.err); got != tt.want {
			t.Errorf("StatusCode(%v): got %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestWriteError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
		body string
	}{
		{&http.MaxBytesError{Limit: 10}, 413, "request body larger than 10 bytes\n"},
		{loadshed.ErrOverloaded, 503, "service overloaded\n"},
		{timeout.ErrElapsed, 503, "request timed out\n"},
		{buffer.ErrClosed, 503, "service unavailable\n"},
		{errors.New("secret"), 500, "Internal Server Error\n"},
	} {
		rec := httptest.NewRecorder()
		towerhttp.WriteError(rec, httptest.NewRequest("GET", "/", nil), tt.err)
		if rec.Code != tt.code || rec.Body.String() != tt.body {
			t.Errorf("WriteError(%v): got %d %q, want %d %q", tt.err, rec.Code, rec.Body.String(), tt.code, tt.body)
		}
		if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, "text/plain") {
			t.Errorf("WriteError(%v): got Content-Type %q, want text/plain", tt.err, got)
		}
	}
}
