package towerhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// served is a ServeHTTP running on its own goroutine, into a recorder.
type served struct {
	rec      *httptest.ResponseRecorder
	done     chan struct{}
	panicked any
	at       time.Duration // when ServeHTTP returned, since start
}

// serve runs h.ServeHTTP for r on its own goroutine and waits until it has
// returned or blocked. It must run inside a synctest bubble.
func serve(h http.Handler, r *http.Request, start time.Time) *served {
	s := &served{rec: httptest.NewRecorder(), done: make(chan struct{})}
	go func() {
		defer func() {
			s.panicked = recover()
			s.at = time.Since(start)
			close(s.done)
		}()
		h.ServeHTTP(s.rec, r)
	}()
	synctest.Wait()
	return s
}

func (s *served) finished() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// expect waits for ServeHTTP and fails t unless it answered code with
// body, without a panic.
func (s *served) expect(t *testing.T, code int, body string) {
	t.Helper()
	<-s.done
	if s.panicked != nil {
		t.Fatalf("ServeHTTP panicked: %v", s.panicked)
	}
	if s.rec.Code != code || s.rec.Body.String() != body {
		t.Fatalf("got %d %q, want %d %q", s.rec.Code, s.rec.Body.String(), code, body)
	}
}

// hold is a handler that waits for release or for its context, and then
// answers "done" if it was released.
type hold struct {
	release chan struct{}
}

func (h hold) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-h.release:
		io.WriteString(w, "done")
	case <-r.Context().Done():
	}
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

func shedOverLimit(n int) serverLayer {
	return tower.Stack(
		loadshed.NewLayer[*http.Request, towerhttp.Response](),
		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](n),
	)
}

// LoadShed > ConcurrencyLimit(1): while one request is in the handler, the
// next is answered 503 with Retry-After at once; once the first is done,
// requests go through again.
func TestHandlerShedsWithRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := hold{release: make(chan struct{})}
		h := towerhttp.NewHandler(g, shedOverLimit(1))
		start := time.Now()
		first := serve(h, httptest.NewRequest("GET", "/", nil), start)
		if first.finished() {
			t.Fatal("the first request was answered before its handler was released")
		}
		second := serve(h, httptest.NewRequest("GET", "/", nil), start)
		second.expect(t, http.StatusServiceUnavailable, "service overloaded\n")
		if got := second.rec.Header().Get("Retry-After"); got != "1" {
			t.Errorf("got Retry-After %q, want %q", got, "1")
		}
		close(g.release)
		first.expect(t, http.StatusOK, "done")
		serve(h, httptest.NewRequest("GET", "/", nil), start).expect(t, http.StatusOK, "done")
	})
}

// A stack whose Ready fails for good answers 503 with Retry-After, and
// the error handler gets a ReadyError wrapping Ready's error.
func TestHandlerReadyFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, mh := towertest.NewMock[*http.Request, towerhttp.Response]()
		broken := errors.New("backend gone")
		mh.FailReady(broken)
		var got error
		h := towerhttp.NewServiceHandler(mock, towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
			got = err
			towerhttp.WriteError(w, r, err)
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != 503 || rec.Body.String() != "service unavailable\n" || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("got %d %q Retry-After %q, want 503 %q Retry-After 1", rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"), "service unavailable\n")
		}
		var re *towerhttp.ReadyError
		if !errors.As(got, &re) || re.Err != broken {
			t.Errorf("the error handler got %v, want a *ReadyError wrapping %v", got, broken)
		}
		if mh.Calls() != 0 {
			t.Errorf("the stack got %d calls, want 0", mh.Calls())
		}
	})
}

// Buffer > handler, closed: 503 with Retry-After.
func TestHandlerBufferClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		buf := buffer.NewLayer[*http.Request, towerhttp.Response](4)
		h := towerhttp.NewHandler(ok, buf)
		serve(h, httptest.NewRequest("GET", "/", nil), time.Now()).expect(t, 200, "ok")
		buf.Close()
		s := serve(h, httptest.NewRequest("GET", "/", nil), time.Now())
		s.expect(t, 503, "service unavailable\n")
		if got := s.rec.Header().Get("Retry-After"); got != "1" {
			t.Errorf("got Retry-After %q, want 1", got)
		}
	})
}

// Timeout(100ms) over a handler that waits for its context: 503 "request
// timed out" at 100ms, without Retry-After.
func TestHandlerElapsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := towerhttp.NewHandler(hold{}, timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond))
		s := serve(h, httptest.NewRequest("GET", "/", nil), time.Now())
		s.expect(t, http.StatusServiceUnavailable, "request timed out\n")
		if s.at != 100*time.Millisecond {
			t.Errorf("answered at %v, want 100ms", s.at)
		}
		if got, ok := s.rec.Header()["Retry-After"]; ok {
			t.Errorf("got Retry-After %q, want none", got)
		}
	})
}

// In Cooperative mode the handler has returned when the Timeout fails the
// call: a handler that wrote its response before the deadline passed keeps
// it, and the error handler is not called.
func TestHandlerElapsedAfterHeadersWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "partial")
			<-r.Context().Done()
		})
		called := false
		h := towerhttp.NewHandler(slow, timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond),
			towerhttp.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) { called = true }))
		serve(h, httptest.NewRequest("GET", "/", nil), time.Now()).expect(t, 200, "partial")
		if called {
			t.Error("the error handler was called after the response was written")
		}
	})
}

// In Abandon mode the Timeout answers at the deadline while the handler
// goes on. If the handler has sent its status, the response is aborted
// with http.ErrAbortHandler; its later writes fail with
// http.ErrHandlerTimeout.
func TestHandlerAbandonedAfterHeadersAborts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		lateWrite := make(chan error, 1)
		stuck := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "partial")
			<-release // ignores its context
			_, err := io.WriteString(w, "late")
			lateWrite <- err
		})
		h := towerhttp.NewHandler(stuck, timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond, timeout.WithMode(timeout.Abandon)))
		s := serve(h, httptest.NewRequest("GET", "/", nil), time.Now())
		<-s.done
		if s.panicked != http.ErrAbortHandler || s.at != 100*time.Millisecond {
			t.Errorf("ServeHTTP panicked with %v at %v, want http.ErrAbortHandler at 100ms", s.panicked, s.at)
		}
		close(release)
		if err := <-lateWrite; err != http.ErrHandlerTimeout {
			t.Errorf("a write after the Handler answered returned %v, want http.ErrHandlerTimeout", err)
		}
		if got := s.rec.Body.String(); got != "partial" {
			t.Errorf("got body %q, want %q", got, "partial")
		}
	})
}

// In Abandon mode, a handler that has written nothing by the deadline
// leaves the Handler free to answer 503; what it writes later goes
// nowhere.
func TestHandlerAbandonedBeforeHeadersAnswers503(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		lateWrite := make(chan error, 1)
		stuck := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			w.Header().Set("X-Late", "1")
			_, err := io.WriteString(w, "late")
			lateWrite <- err
		})
		h := towerhttp.NewHandler(stuck, timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond, timeout.WithMode(timeout.Abandon)))
		s := serve(h, httptest.NewRequest("GET", "/", nil), time.Now())
		s.expect(t, 503, "request timed out\n")
		close(release)
		if err := <-lateWrite; err != http.ErrHandlerTimeout {
			t.Errorf("a write after the Handler answered returned %v, want http.ErrHandlerTimeout", err)
		}
		if s.rec.Body.String() != "request timed out\n" || s.rec.Header().Get("X-Late") != "" {
			t.Errorf("got body %q, X-Late %q after the late write; want it unchanged", s.rec.Body.String(), s.rec.Header().Get("X-Late"))
		}
	})
}

// A handler that panics: the panic goes on up to net/http, and the
// concurrency permit has been given back.
func TestHandlerPanicReleasesPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fail := true
		h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fail {
				panic("boom")
			}
			io.WriteString(w, "ok")
		}), shedOverLimit(1))
		s := serve(h, httptest.NewRequest("GET", "/", nil), time.Now())
		<-s.done
		if s.panicked != "boom" {
			t.Fatalf("ServeHTTP panicked with %v, want boom", s.panicked)
		}
		fail = false
		serve(h, httptest.NewRequest("GET", "/", nil), time.Now()).expect(t, 200, "ok")
	})
}

// A client that goes away while its request waits in Ready for a permit:
// nothing is written, nothing stays reserved.
func TestHandlerClientGoneWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := hold{release: make(chan struct{})}
		var got error
		h := towerhttp.NewHandler(g, limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1),
			towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
				got = err
				towerhttp.WriteError(w, r, err)
			}))
		start := time.Now()
		first := serve(h, httptest.NewRequest("GET", "/", nil), start)
		ctx, cancel := context.WithCancel(t.Context())
		waiting := serve(h, httptest.NewRequest("GET", "/", nil).WithContext(ctx), start)
		if waiting.finished() {
			t.Fatal("the second request did not wait for the permit")
		}
		cancel()
		waiting.expect(t, 200, "") // the recorder's default: nothing written
		if len(waiting.rec.Header()) != 0 || got != context.Canceled {
			t.Errorf("got header %v and error %v, want none and context.Canceled", waiting.rec.Header(), got)
		}
		close(g.release)
		first.expect(t, 200, "done")
		serve(h, httptest.NewRequest("GET", "/", nil), start).expect(t, 200, "done")
	})
}

// A client that goes away while its handler runs: the handler sees its
// context end, returns, and the permit is free for the next request.
func TestHandlerClientGoneDuringCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := hold{release: make(chan struct{})}
		h := towerhttp.NewHandler(g, shedOverLimit(1))
		ctx, cancel := context.WithCancel(t.Context())
		s := serve(h, httptest.NewRequest("GET", "/", nil).WithContext(ctx), time.Now())
		cancel()
		s.expect(t, 200, "")
		close(g.release)
		serve(h, httptest.NewRequest("GET", "/", nil), time.Now()).expect(t, 200, "done")
	})
}

// The handler's Response reaches the layers above it.
func TestHandlerResponseStatus(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    int
	}{
		{"WriteHeader", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }, http.StatusCreated},
		{"Write", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }, http.StatusOK},
		{"nothing", func(w http.ResponseWriter, r *http.Request) {}, http.StatusOK},
		{"1xx first", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusAccepted)
		}, http.StatusAccepted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got int
			seen := tower.MapResponseLayer[*http.Request](func(r towerhttp.Response) towerhttp.Response {
				got = r.StatusCode
				return r
			})
			towerhttp.NewHandler(tt.handler, seen).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			if got != tt.want {
				t.Errorf("got StatusCode %d, want %d", got, tt.want)
			}
		})
	}
}

// Flush goes through the Handler's writer, and http.ResponseController
// finds net/http's writer under it.
func TestHandlerFlushAndResponseController(t *testing.T) {
	h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "a")
		w.(http.Flusher).Flush()
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
		if _, _, err := http.NewResponseController(w).Hijack(); !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("Hijack on a recorder: got %v, want http.ErrNotSupported", err)
		}
	}), tower.Stack[*http.Request, towerhttp.Response]())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if !rec.Flushed || rec.Body.String() != "a" {
		t.Errorf("got flushed %v, body %q; want true, %q", rec.Flushed, rec.Body.String(), "a")
	}
}

func TestHandlerServiceOutsideHandlerPanics(t *testing.T) {
	svc := towerhttp.HandlerService(ok)
	towertest.Panics(t, "towerhttp: a HandlerService was called outside a towerhttp.Handler", func() {
		tower.Call(t.Context(), svc, httptest.NewRequest("GET", "/", nil))
	})
}

// A handler still running once the Handler has answered (in Abandon mode)
// can no longer touch the connection through http.ResponseController,
// which may be serving another request by then: its deadlines and full
// duplex fail with http.ErrHandlerTimeout. Before, they reach net/http's
// writer (a recorder, here, which has none).
func TestHandlerAbandonedLosesConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		errs := make(chan []error, 2)
		calls := func(w http.ResponseWriter) []error {
			rc := http.NewResponseController(w)
			return []error{rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Time{}), rc.EnableFullDuplex()}
		}
		stuck := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			errs <- calls(w)
			<-release
			errs <- calls(w)
		})
		h := towerhttp.NewHandler(stuck, timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond, timeout.WithMode(timeout.Abandon)))
		serve(h, httptest.NewRequest("GET", "/", nil), time.Now()).expect(t, 503, "request timed out\n")
		close(release)
		for i, want := range []error{http.ErrNotSupported, http.ErrHandlerTimeout} {
			for _, err := range <-errs {
				if !errors.Is(err, want) {
					t.Errorf("call %d: got %v, want %v", i, err, want)
				}
			}
		}
	})
}
