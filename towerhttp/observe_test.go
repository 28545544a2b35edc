package towerhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// requests is a RequestSink that keeps what it is told, one line a
// request: "method route scheme status outcome latency".
type requests struct {
	mu    sync.Mutex
	lines []string
}

func (s *requests) ObserveRequest(r metrics.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Protocol != metrics.HTTPServer {
		panic(fmt.Sprintf("got protocol %v, want %v", r.Protocol, metrics.HTTPServer))
	}
	s.lines = append(s.lines, fmt.Sprintf("%s %q %s %d %v %v", r.Method, r.Route, r.Scheme, r.Status, r.Outcome, r.Latency))
}

// take returns the lines so far, and forgets them.
func (s *requests) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := strings.Join(s.lines, "\n")
	s.lines = nil
	return lines
}

// answer serves a request of method for path through h, and returns the
// status and body it got.
func answer(h http.Handler, method, path string) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return strings.TrimSpace(fmt.Sprint(rec.Code, " ", rec.Body.String()))
}

// mux is a ServeMux whose routes sleep as long as their wildcard says,
// in milliseconds, and then answer.
func sleepyMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sleep/{ms}", func(w http.ResponseWriter, r *http.Request) {
		var ms int
		fmt.Sscan(r.PathValue("ms"), &ms)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "slept")
	})
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	})
	return mux
}

// A Handler over a ServeMux reports each request: the route from the
// pattern its mux matched, or would have matched for a request that never
// reached it; the status sent; the outcome of the stack's error; the time
// ServeHTTP took, in virtual milliseconds.
func TestRequestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got requests
		h := towerhttp.NewHandler(sleepyMux(), tower.Stack(
			loadshed.NewLayer[*http.Request, towerhttp.Response](),
			timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond),
			limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1),
		), towerhttp.WithRequestMetrics(&got))

		steps := []struct {
			name, method, path string
			response, want     string
		}{
			{"served", "GET", "/sleep/30", "200 slept", `GET "/sleep/{ms}" http 200 served 30ms`},
			{"created", "POST", "/items", "201", `POST "/items" http 201 served 0s`},
			{"a handler's 500 is served", "GET", "/fail", "500 oops", `GET "/fail" http 500 served 0s`},
			{"timed out", "GET", "/sleep/150", "503 request timed out", `GET "/sleep/{ms}" http 503 timed_out 100ms`},
			{"no route", "GET", "/nowhere", "404 404 page not found", `GET "" http 404 served 0s`},
		}
		for _, s := range steps {
			if r := answer(h, s.method, s.path); r != s.response {
				t.Errorf("%s: got response %q, want %q", s.name, r, s.response)
			}
			if g := got.take(); g != s.want {
				t.Errorf("%s: got\n%s\nwant\n%s", s.name, g, s.want)
			}
		}

		// A request shed while another holds the limit's permit never
		// reaches the mux, which tells its route all the same.
		done := make(chan string)
		go func() { done <- answer(h, "GET", "/sleep/50") }()
		synctest.Wait()
		if r := answer(h, "POST", "/items"); r != "503 service overloaded" {
			t.Errorf("shed: got response %q", r)
		}
		<-done
		const want = `POST "/items" http 503 shed 0s` + "\n" + `GET "/sleep/{ms}" http 200 served 50ms`
		if g := got.take(); g != want {
			t.Errorf("shed: got\n%s\nwant\n%s", g, want)
		}
	})
}

// A Handler that serves one route of a ServeMux takes the route from the
// request it is given, for every request, the refused ones included.
func TestRequestMetricsUnderMux(t *testing.T) {
	synctest.Test(t, testRequestMetricsUnderMux)
}

func testRequestMetricsUnderMux(t *testing.T) {
	var got requests
	refuse := tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
		return towerhttp.Response{}, loadshed.ErrOverloaded
	})
	mux := http.NewServeMux()
	mux.Handle("DELETE /items/{id}", towerhttp.NewServiceHandler(refuse, towerhttp.WithRequestMetrics(&got)))
	if r := answer(mux, "DELETE", "/items/7"); r != "503 service overloaded" {
		t.Errorf("got response %q", r)
	}
	if g, want := got.take(), `DELETE "/items/{id}" http 503 shed 0s`; g != want {
		t.Errorf("got %s, want %s", g, want)
	}
}

// What the request metrics report for each way a request can end without
// its handler's answer: the status the error handler sent, custom or not;
// none for a client gone; the outcome of the error.
func TestRequestMetricsFailures(t *testing.T) {
	failWith := func(err error) tower.Service[*http.Request, towerhttp.Response] {
		return tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
			return towerhttp.Response{}, err
		})
	}
	teapot := towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(http.StatusTeapot)
	})
	silent := towerhttp.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) {})
	// An error handler that sends its body with ReadFrom (as io.Copy
	// does, the sendfile path), or flushes before writing, sends 200.
	readFrom := towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		w.(io.ReaderFrom).ReadFrom(strings.NewReader("sorry"))
	})
	flush := towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		w.(http.Flusher).Flush()
	})
	for _, tt := range []struct {
		name string
		svc  tower.Service[*http.Request, towerhttp.Response]
		opt  towerhttp.HandlerOption
		body io.Reader
		want string
	}{
		{"error", failWith(errors.New("db down")), nil, nil, `GET "" http 500 error 0s`},
		{"custom error handler", failWith(loadshed.ErrOverloaded), teapot, nil, `GET "" http 418 shed 0s`},
		{"nothing written", failWith(loadshed.ErrOverloaded), silent, nil, `GET "" http 0 shed 0s`},
		{"body sent with ReadFrom", failWith(loadshed.ErrOverloaded), readFrom, nil, `GET "" http 200 shed 0s`},
		{"flushed", failWith(loadshed.ErrOverloaded), flush, nil, `GET "" http 200 shed 0s`},
		{"throttled", failWith(throttled{}), nil, nil, `GET "" http 429 throttled 0s`},
		{"body too large", towerhttp.HandlerService(ok), towerhttp.WithMaxBodyBytes(1), strings.NewReader("ab"), `GET "" http 413 error 0s`},
		{"ready failed", brokenReady{}, nil, nil, `GET "" http 503 error 0s`},
	} {
		synctest.Test(t, func(t *testing.T) {
			var got requests
			opts := []towerhttp.HandlerOption{towerhttp.WithRequestMetrics(&got)}
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			h := towerhttp.NewServiceHandler(tt.svc, opts...)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", tt.body))
			if g := got.take(); g != tt.want {
				t.Errorf("%s: got %s, want %s", tt.name, g, tt.want)
			}
		})
	}
}

// throttled is a user's error that says its caller is over its allowance.
type throttled struct{}

func (throttled) Error() string   { return "slow down" }
func (throttled) Throttled() bool { return true }

// brokenReady is a stack whose Ready fails.
type brokenReady struct{}

func (brokenReady) Ready(context.Context) (tower.Permit[*http.Request, towerhttp.Response], error) {
	return tower.Permit[*http.Request, towerhttp.Response]{}, errors.New("broken")
}

// A client gone before its answer: no status, outcome canceled. A handler
// that panics: the panic goes on up, and the request is reported as an
// error, with the status it had sent.
func TestRequestMetricsCanceledAndPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got requests
		h := towerhttp.NewHandler(sleepyMux(), tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithRequestMetrics(&got))
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(20 * time.Millisecond)
			cancel()
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", "/sleep/100", nil))
		if g, want := got.take(), `GET "/sleep/{ms}" http 0 canceled 20ms`; g != want {
			t.Errorf("canceled: got %s, want %s", g, want)
		}

		mux := http.NewServeMux()
		mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			panic("boom")
		})
		h = towerhttp.NewHandler(mux, tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithRequestMetrics(&got))
		towertest.Panics(t, "boom", func() { answer(h, "GET", "/boom") })
		if g, want := got.take(), `GET "/boom" http 202 error 0s`; g != want {
			t.Errorf("panic: got %s, want %s", g, want)
		}
	})
}

// A handler a Timeout in Abandon mode left running has not routed its
// request when the Handler answers: the mux is asked.
func TestRequestMetricsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got requests
		release := make(chan struct{})
		mux := http.NewServeMux()
		mux.HandleFunc("GET /stuck/{id}", func(w http.ResponseWriter, r *http.Request) { <-release })
		h := towerhttp.NewHandler(mux, timeout.NewLayer[*http.Request, towerhttp.Response](10*time.Millisecond, timeout.WithMode(timeout.Abandon)),
			towerhttp.WithRequestMetrics(&got))
		if r := answer(h, "GET", "/stuck/1"); r != "503 request timed out" {
			t.Errorf("got response %q", r)
		}
		close(release)
		synctest.Wait()
		if g, want := got.take(), `GET "/stuck/{id}" http 503 timed_out 10ms`; g != want {
			t.Errorf("got %s, want %s", g, want)
		}
	})
}

// A Handler with request metrics allocates nothing more per request than
// one without, served or shed.
func TestRequestMetricsDoNotAllocate(t *testing.T) {
	var c metrics.Counts
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", noop)
	r := httptest.NewRequest("GET", "/", nil)
	w := &discardWriter{h: http.Header{}}
	never := tower.LayerFunc[*http.Request, towerhttp.Response](func(tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
		return neverReady{}
	})
	for _, tt := range []struct {
		name  string
		stack serverLayer
	}{
		{"served", tower.Stack[*http.Request, towerhttp.Response]()},
		{"shed", tower.Stack(loadshed.NewLayer[*http.Request, towerhttp.Response](), never)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bare := towerhttp.NewHandler(mux, tt.stack)
			observed := towerhttp.NewHandler(mux, tt.stack, towerhttp.WithRequestMetrics(&c))
			without := towertest.AllocsPerRun(100, func() { bare.ServeHTTP(w, r) })
			with := towertest.AllocsPerRun(100, func() { observed.ServeHTTP(w, r) })
			if with != without {
				t.Errorf("got %v allocations per request with request metrics, want %v as without", with, without)
			}
		})
	}
	if s := c.Snapshot(); s.Served() == 0 || s.Calls[metrics.OutcomeShed] == 0 {
		t.Errorf("got %v, want served and shed requests counted", s)
	}
}

// neverReady is a service that is never ready.
type neverReady struct{}

func (neverReady) Ready(ctx context.Context) (tower.Permit[*http.Request, towerhttp.Response], error) {
	<-ctx.Done()
	return tower.Permit[*http.Request, towerhttp.Response]{}, ctx.Err()
}

func TestWithRequestMetricsPanics(t *testing.T) {
	towertest.Panics(t, "towerhttp.WithRequestMetrics: nil sink", func() { towerhttp.WithRequestMetrics(nil) })
	towertest.Panics(t, "towerhttp.WithRequestMetrics: nil sink", func() { towerhttp.WithRequestMetrics((*metrics.Counts)(nil)) })
}

// BenchmarkServerRequestMetrics is the Handler with no layers, without
// request metrics and with them, reporting to a Counts: the cost of the
// hook itself.
func BenchmarkServerRequestMetrics(b *testing.B) {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", noop)
	for _, bm := range []struct {
		name string
		opts []towerhttp.HandlerOption
	}{
		{"off", nil},
		{"Counts", []towerhttp.HandlerOption{towerhttp.WithRequestMetrics(&metrics.Counts{})}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			h := towerhttp.NewHandler(mux, tower.Stack[*http.Request, towerhttp.Response](), bm.opts...)
			r := httptest.NewRequest("GET", "/", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				h.ServeHTTP(w, r)
				n += w.code
			}
			sink += n
		})
	}
}
