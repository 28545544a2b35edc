package towerhttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
)

// The edges of the request body's watching: the limit of WithMaxBodyBytes,
// how the handler's deadline is set on the connection and when it has
// passed, the context the handler's request carries, what counts as the
// status sent, and a copy's body closed before it was read.

// WithMaxBodyBytes(3): a declared body of exactly 3 bytes goes to the
// handler whole; one of 4 is answered 413 before the stack is asked for
// anything. A body without a length (Content-Length -1) of exactly 3 bytes
// is read whole; one of 4 is cut after 3, and the handler, which writes
// nothing once its read failed, has its request answered 413.
func TestMaxBodyBytesBounds(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		length   int64
		called   bool
		wantCode int
		wantRead string
		wantErr  bool
	}{
		{"Content-Length at the limit", "abc", 3, true, 200, "abc", false},
		{"Content-Length one over", "abcd", 4, false, 413, "", false},
		{"no length, at the limit", "abc", -1, true, 200, "abc", false},
		{"no length, one over", "abcd", -1, true, 413, "abc", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var called bool
			var read string
			var readErr error
			h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				b, err := io.ReadAll(r.Body)
				read, readErr = string(b), err
				if err == nil {
					w.Write(b)
				}
			}), tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithMaxBodyBytes(3))
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			r.ContentLength = tt.length
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if called != tt.called {
				t.Fatalf("handler called: got %v, want %v", called, tt.called)
			}
			if w.Code != tt.wantCode {
				t.Errorf("got status %d, want %d", w.Code, tt.wantCode)
			}
			if read != tt.wantRead {
				t.Errorf("handler read %q, want %q", read, tt.wantRead)
			}
			var tooLarge *http.MaxBytesError
			if got := errors.As(readErr, &tooLarge); got != tt.wantErr {
				t.Errorf("handler's read error %v: got a *http.MaxBytesError %v, want %v", readErr, got, tt.wantErr)
			}
		})
	}
}

// netHTTPRequest returns a POST of body as net/http's server has it for
// HTTP/1.1: with net/http's own body, which nothing has read.
func netHTTPRequest(t *testing.T, body string) *http.Request {
	t.Helper()
	raw := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The handler's deadline, 10ms away, is set on the connection once, before
// the handler runs, for a body net/http reads itself: HTTP/1's own body
// that nothing has read, and any HTTP/2 body (the stream's deadline). It
// is set around each read, and cleared after, for an HTTP/1 body that
// net/http's server does not own: one a middleware replaced, or one whose
// form was parsed. The handler reads "abc" to its end: in one read from
// net/http's body, which returns the end with the last bytes, and in two
// from a strings.Reader.
func TestBodyDeadlineOnceOrPerRead(t *testing.T) {
	tests := []struct {
		name    string
		request func(t *testing.T) *http.Request
		reads   int // armed around each: 0 if set once
	}{
		{"HTTP/1.1, net/http's body", func(t *testing.T) *http.Request { return netHTTPRequest(t, "abc") }, 0},
		{"HTTP/1.1, net/http's body, form parsed", func(t *testing.T) *http.Request {
			r := netHTTPRequest(t, "abc")
			r.PostForm = url.Values{}
			return r
		}, 1},
		{"HTTP/1.1, another body", func(t *testing.T) *http.Request {
			return httptest.NewRequest("POST", "/", strings.NewReader("abc"))
		}, 2},
		{"HTTP/2, another body", func(t *testing.T) *http.Request {
			r := httptest.NewRequest("POST", "/", strings.NewReader("abc"))
			r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
			return r
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, err := io.ReadAll(r.Body)
					if err != nil {
						t.Errorf("reading the body: %v", err)
					}
					w.Write(b)
				}), tower.Stack[*http.Request, towerhttp.Response]())
				r := tt.request(t)
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				d, _ := ctx.Deadline()
				w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder()}
				h.ServeHTTP(w, r.WithContext(ctx))
				if w.Code != 200 || w.Body.String() != "abc" {
					t.Errorf("got %d %q, want 200 %q", w.Code, w.Body.String(), "abc")
				}
				want := []time.Time{d}
				if tt.reads > 0 {
					want = nil
					for range tt.reads {
						want = append(want, d, time.Time{})
					}
				}
				if !sameTimes(w.deadlines, want) {
					t.Errorf("got the deadlines %v set, want %v", w.deadlines, want)
				}
			})
		})
	}
}

func sameTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// A read of a body that the Handler arms around each read (an HTTP/1 body
// net/http's server does not own) 1ns before the handler's deadline is
// armed with the deadline and cleared after; one at the deadline exactly
// fails at once with an error that wraps os.ErrDeadlineExceeded, reads
// nothing and sets nothing, and the handler, which writes nothing, has its
// request answered 503. In the testing/synctest bubble the deadline has no
// monotonic reading, and package mono's readings are negative: the Handler
// converts the deadline exactly all the same.
func TestBodyReadAtDeadline(t *testing.T) {
	const timeout = 10 * time.Millisecond
	tests := []struct {
		name      string
		wait      time.Duration
		wantN     int
		wantErr   bool
		wantCode  int
		wantTimes int // of the deadline, then its clearing
	}{
		{"1ns before", timeout - time.Nanosecond, 3, false, 200, 2},
		{"at the deadline", timeout, 0, true, 503, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n int
				var readErr error
				h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(tt.wait)
					n, readErr = r.Body.Read(make([]byte, 8))
				}), tower.Stack[*http.Request, towerhttp.Response]())
				ctx, cancel := context.WithTimeout(t.Context(), timeout)
				defer cancel()
				d, _ := ctx.Deadline()
				r := httptest.NewRequest("POST", "/", strings.NewReader("abc")).WithContext(ctx)
				w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder()}
				h.ServeHTTP(w, r)
				if n != tt.wantN || errors.Is(readErr, os.ErrDeadlineExceeded) != tt.wantErr {
					t.Errorf("the read: got %d, %v; want %d, a deadline error %v", n, readErr, tt.wantN, tt.wantErr)
				}
				want := []time.Time{d, {}}[:tt.wantTimes]
				if !sameTimes(w.deadlines, want) {
					t.Errorf("got the deadlines %v set, want %v", w.deadlines, want)
				}
				if w.Code != tt.wantCode {
					t.Errorf("got status %d, want %d", w.Code, tt.wantCode)
				}
			})
		})
	}
}

type ctxKey struct{}

// The handler's request carries the context its call was given (here one a
// layer derived, with a value), also when the Handler has nothing to watch
// on the body: when a layer replaced the body, and when there is neither a
// limit nor a deadline.
func TestRequestCarriesCallContext(t *testing.T) {
	for _, replace := range []bool{true, false} {
		name := "nothing to watch"
		if replace {
			name = "body replaced"
		}
		t.Run(name, func(t *testing.T) {
			var got any
			var read string
			leaf := towerhttp.HandlerService(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Context().Value(ctxKey{})
				b, _ := io.ReadAll(r.Body)
				read = string(b)
			}))
			layer := tower.ServiceFunc[*http.Request, towerhttp.Response](func(ctx context.Context, r *http.Request) (towerhttp.Response, error) {
				p, err := leaf.Ready(ctx)
				if err != nil {
					return towerhttp.Response{}, err
				}
				if replace {
					r = r.Clone(r.Context())
					r.Body = io.NopCloser(strings.NewReader("replaced"))
				}
				return p.Call(context.WithValue(ctx, ctxKey{}, "layer's"), r)
			})
			r := httptest.NewRequest("POST", "/", strings.NewReader("abc"))
			towerhttp.NewServiceHandler(layer).ServeHTTP(httptest.NewRecorder(), r)
			if got != "layer's" {
				t.Errorf("the handler's context has %v, want %q", got, "layer's")
			}
			want := "abc"
			if replace {
				want = "replaced"
			}
			if read != want {
				t.Errorf("the handler read %q, want %q", read, want)
			}
		})
	}
}

// The status counts as sent once the handler wrote a final status: 200
// itself, as the lowest. A Hijack that failed sends nothing. So a handler
// that then waits for its context to end, 10ms away, has its request
// answered through the error handler, with the context's error, only if
// it sent nothing.
func TestStatusSentBounds(t *testing.T) {
	tests := []struct {
		name     string
		handler  func(w http.ResponseWriter) error
		answered bool
	}{
		{"WriteHeader(200)", func(w http.ResponseWriter) error { w.WriteHeader(200); return nil }, false},
		{"Hijack failed", func(w http.ResponseWriter) error {
			if _, _, err := http.NewResponseController(w).Hijack(); !errors.Is(err, http.ErrNotSupported) {
				return err
			}
			return nil
		}, true},
		{"nothing", func(http.ResponseWriter) error { return nil }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var answered error
				h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if err := tt.handler(w); err != nil {
						t.Errorf("got %v, want the Hijack to fail with http.ErrNotSupported", err)
					}
					<-r.Context().Done()
				}), tower.Stack[*http.Request, towerhttp.Response](),
					towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) { answered = err }))
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
				if tt.answered != (answered != nil) || answered != nil && !errors.Is(answered, context.DeadlineExceeded) {
					t.Errorf("got the error handler called with %v, want it called %v, with context.DeadlineExceeded", answered, tt.answered)
				}
			})
		})
	}
}

// The body of a copy from CloneRequest that is closed before it was read
// reads nothing after: it fails with http.ErrBodyReadAfterClose, and
// GetBody is never called.
func TestCloneRequestClosedBeforeRead(t *testing.T) {
	var gets atomic.Int32
	req, err := http.NewRequest("POST", "http://x/", strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	getBody := req.GetBody
	req.GetBody = func() (io.ReadCloser, error) {
		gets.Add(1)
		return getBody()
	}
	clone, ok := towerhttp.CloneRequest(req)
	if !ok {
		t.Fatal("CloneRequest: got false, want a copy")
	}
	if err := clone.Body.Close(); err != nil {
		t.Errorf("Close: got %v, want nil", err)
	}
	if n, err := clone.Body.Read(make([]byte, 8)); n != 0 || err != http.ErrBodyReadAfterClose {
		t.Errorf("Read after Close: got %d, %v; want 0, %v", n, err, http.ErrBodyReadAfterClose)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("got %d calls of GetBody, want 0", n)
	}
}
