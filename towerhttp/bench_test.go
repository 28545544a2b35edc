package towerhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// discardWriter is the cheapest ResponseWriter: it keeps the status and
// nothing else, so that what a benchmark measures is the adapter.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// noop answers 204 and does nothing else.
var noop = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })

// serverStacks are the handlers compared: the handler alone, under a
// Handler with no layers, and under LoadShed > ConcurrencyLimit > Timeout.
func serverStacks() []struct {
	name string
	h    http.Handler
} {
	return []struct {
		name string
		h    http.Handler
	}{
		{"bare", noop},
		{"Handler", towerhttp.NewHandler(noop, tower.Stack[*http.Request, towerhttp.Response]())},
		{"Handler/LoadShed>Limit>Timeout", towerhttp.NewHandler(noop, tower.Stack(
			loadshed.NewLayer[*http.Request, towerhttp.Response](),
			limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1<<20),
			timeout.NewLayer[*http.Request, towerhttp.Response](time.Minute),
		))},
	}
}

// BenchmarkServer is the server adapter's overhead per request over a
// handler that does nothing: with a ResponseWriter that does nothing
// either, and with an httptest.ResponseRecorder made for each request.
func BenchmarkServer(b *testing.B) {
	for _, s := range serverStacks() {
		b.Run(s.name+"/discard", func(b *testing.B) {
			r := httptest.NewRequest("GET", "/", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				s.h.ServeHTTP(w, r)
				n += w.code
			}
			sink += n
		})
		b.Run(s.name+"/recorder", func(b *testing.B) {
			r := httptest.NewRequest("GET", "/", nil)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				w := httptest.NewRecorder()
				s.h.ServeHTTP(w, r)
				n += w.Code
			}
			sink += n
		})
	}
}

// benchBody is a request body of 64 bytes, made again for each request
// without an allocation.
type benchBody struct{ left int }

func (b *benchBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), b.left)
	b.left -= n
	return n, nil
}

func (b *benchBody) Close() error { return nil }

// BenchmarkServerBody is the server adapter's overhead per request for a
// POST whose handler reads its 64-byte body: the body's reads are watched
// (for the limit of WithMaxBodyBytes, for the handler's deadline under a
// Timeout).
func BenchmarkServerBody(b *testing.B) {
	reads := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	for _, s := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", reads},
		{"Handler", towerhttp.NewHandler(reads, tower.Stack[*http.Request, towerhttp.Response]())},
		{"Handler/MaxBodyBytes", towerhttp.NewHandler(reads, tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithMaxBodyBytes(1<<20))},
		{"Handler/Timeout", towerhttp.NewHandler(reads, timeout.NewLayer[*http.Request, towerhttp.Response](time.Minute))},
	} {
		b.Run(s.name, func(b *testing.B) {
			body := &benchBody{}
			r := httptest.NewRequest("POST", "/", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				body.left, r.Body, r.ContentLength = 64, body, 64
				s.h.ServeHTTP(w, r)
				n += w.code
			}
			sink += n
		})
	}
}

// BenchmarkServerParallel shares each handler among GOMAXPROCS callers.
func BenchmarkServerParallel(b *testing.B) {
	for _, s := range serverStacks() {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := httptest.NewRequest("GET", "/", nil)
				w := &discardWriter{h: http.Header{}}
				n := 0
				for pb.Next() {
					s.h.ServeHTTP(w, r)
					n += w.code
				}
				psink.Add(int64(n))
			})
		})
	}
}

// okBase answers every request at once with one shared response, without
// a network. A transport may wrap the response's body in place; the
// benchmark puts it back after each request.
var okResponse = &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}

var okBase = fakeBase(func(*http.Request) (*http.Response, error) { return okResponse, nil })

// BenchmarkTransport is the transport's overhead per request over a base
// RoundTripper that answers at once: the base alone, a Transport with no
// layers, with a ConcurrencyLimit, with a Timeout (whose context ends
// when its call returns, so the body is read under a context of its own),
// and with LoadShed > ConcurrencyLimit > Timeout.
func BenchmarkTransport(b *testing.B) {
	none := tower.Stack[*http.Request, *http.Response]()
	lim := limit.NewConcurrencyLayer[*http.Request, *http.Response](1 << 20)
	tmo := timeout.NewLayer[*http.Request, *http.Response](time.Minute)
	for _, s := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", okBase},
		{"Transport", towerhttp.NewTransport(okBase, none)},
		{"Transport/Limit", towerhttp.NewTransport(okBase, lim)},
		{"Transport/Timeout", towerhttp.NewTransport(okBase, tmo)},
		{"Transport/LoadShed>Limit>Timeout", towerhttp.NewTransport(okBase, tower.Stack(
			loadshed.NewLayer[*http.Request, *http.Response](), lim, tmo))},
	} {
		b.Run(s.name, func(b *testing.B) {
			req, _ := http.NewRequestWithContext(b.Context(), "GET", "http://example.com/", nil)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				resp, err := s.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				n += resp.StatusCode
				okResponse.Body = http.NoBody
			}
			sink += n
		})
	}
}
