package towerhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towerhttp"
)

// The tests in this file state the boundaries of the client side (which
// responses a trip discards and how, when a request's body is closed,
// which request reaches the base) and two of the request metrics.

type clientService = tower.Service[*http.Request, *http.Response]

// clientLayerOf returns a layer that wraps its inner service in call.
func clientLayerOf(call func(ctx context.Context, inner clientService, req *http.Request) (*http.Response, error)) clientLayer {
	return tower.LayerFunc[*http.Request, *http.Response](func(inner clientService) clientService {
		return tower.ServiceFunc[*http.Request, *http.Response](func(ctx context.Context, req *http.Request) (*http.Response, error) {
			return call(ctx, inner, req)
		})
	})
}

// drainProbe is a response body that records what was read of it before
// it was closed.
type drainProbe struct {
	r         *strings.Reader
	n         int  // bytes read before Close
	read      bool // Read was called before Close
	closed    bool
	afterRead string // "read=<read> bytes=<n>" as it was at Close
}

func (p *drainProbe) Read(b []byte) (int, error) {
	if !p.closed {
		p.read = true
	}
	n, err := p.r.Read(b)
	if !p.closed {
		p.n += n
	}
	return n, err
}

func (p *drainProbe) Close() error {
	if !p.closed {
		p.closed = true
		p.afterRead = fmt.Sprintf("read=%v bytes=%d", p.read, p.n)
	}
	return nil
}

// A response the caller does not get (here, one a layer replaced with an
// error) is drained before it is closed if its ContentLength says it is
// between 0 and 4 KiB, both included: a body that says it is empty is
// still read to its EOF, and one of exactly 4096 bytes is read whole. One
// of 4097 bytes, or of unknown length (-1), is closed unread.
func TestTransportDrainBounds(t *testing.T) {
	for _, tt := range []struct {
		contentLength int64
		size          int
		want          string
	}{
		{-1, 10, "read=false bytes=0"},
		{0, 0, "read=true bytes=0"},
		{4096, 4096, "read=true bytes=4096"},
		{4097, 4097, "read=false bytes=0"},
	} {
		t.Run(fmt.Sprint(tt.contentLength), func(t *testing.T) {
			probe := &drainProbe{r: strings.NewReader(strings.Repeat("x", tt.size))}
			base := fakeBase(func(req *http.Request) (*http.Response, error) {
				resp := textResponse(req, 200, "", nil)
				resp.Body, resp.ContentLength = probe, tt.contentLength
				return resp, nil
			})
			refuse := errors.New("refused by the layer")
			replace := clientLayerOf(func(ctx context.Context, inner clientService, req *http.Request) (*http.Response, error) {
				if _, err := tower.Call(ctx, inner, req); err != nil {
					return nil, err
				}
				return nil, refuse
			})
			tr := towerhttp.NewTransport(base, replace)
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://x/", nil)
			if _, err := tr.RoundTrip(req); !errors.Is(err, refuse) {
				t.Fatalf("got %v, want the layer's error", err)
			}
			if !probe.closed || probe.afterRead != tt.want {
				t.Errorf("ContentLength %d: got closed=%v, %s before Close; want closed, %s", tt.contentLength, probe.closed, probe.afterRead, tt.want)
			}
		})
	}
}

// Which of the leaf's responses the transport closes when the stack
// answers: a layer that sends the request twice and returns the first
// response gets it open, and the second is closed; a layer that returns a
// response it built itself leaves the transport unable to tell which body
// the caller reads, and the leaf's response is not closed.
func TestTransportDiscardsByTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name       string
		keep       func(first, second, built *http.Response) *http.Response
		wantBody   string
		wantClosed int32 // leaf bodies closed when RoundTrip returns
	}{
		{"first of two kept", func(first, _, _ *http.Response) *http.Response { return first }, "1", 1},
		{"second of two kept", func(_, second, _ *http.Response) *http.Response { return second }, "2", 1},
		{"built by the layer", func(_, _, built *http.Response) *http.Response { return built }, "built", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var closed atomic.Int32
			n := 0
			base := fakeBase(func(req *http.Request) (*http.Response, error) {
				n++
				return textResponse(req, 200, fmt.Sprint(n), &closed), nil
			})
			twice := clientLayerOf(func(ctx context.Context, inner clientService, req *http.Request) (*http.Response, error) {
				first, err := tower.Call(ctx, inner, req)
				if err != nil {
					return nil, err
				}
				second, err := tower.Call(ctx, inner, req)
				if err != nil {
					return nil, err
				}
				return tt.keep(first, second, textResponse(req, 200, "built", nil)), nil
			})
			tr := towerhttp.NewTransport(base, twice)
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://x/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := closed.Load(); got != tt.wantClosed {
				t.Errorf("got %d of the leaf's bodies closed, want %d", got, tt.wantClosed)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != tt.wantBody {
				t.Errorf("got body %q, want %q", b, tt.wantBody)
			}
		})
	}
}

// A request's body is closed exactly once: by the base when the request
// itself reaches it, and by the transport when only a copy of it with a
// body of its own does (a layer that replays bodies), or when none does
// (a request shed).
func TestTransportClosesRequestBodyOnce(t *testing.T) {
	base := fakeBase(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body)
		req.Body.Close() // as a RoundTripper must
		return textResponse(req, 200, "ok", nil), nil
	})
	copied := clientLayerOf(func(ctx context.Context, inner clientService, req *http.Request) (*http.Response, error) {
		out := req.Clone(ctx)
		out.Body = io.NopCloser(strings.NewReader("copy"))
		return tower.Call(ctx, inner, out)
	})
	shed := clientLayerOf(func(context.Context, clientService, *http.Request) (*http.Response, error) {
		return nil, loadshed.ErrOverloaded
	})
	for _, tt := range []struct {
		name  string
		stack clientLayer
	}{
		{"sent as it is", tower.Stack[*http.Request, *http.Response]()},
		{"a copy sent", copied},
		{"none sent", shed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var closed atomic.Int32
			req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://x/", nil)
			req.Body = &closeCounter{ReadCloser: io.NopCloser(strings.NewReader("body")), n: &closed}
			tr := towerhttp.NewTransport(base, tt.stack)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			if got := closed.Load(); got != 1 {
				t.Errorf("the request's body was closed %d times, want 1", got)
			}
		})
	}
}

// With no layer that derives a context or changes the request, the base
// gets the request given to RoundTrip itself, and the caller gets the
// base's response body itself: the transport sends the request as it is.
func TestTransportSendsRequestAsIs(t *testing.T) {
	var got *http.Request
	body := io.NopCloser(strings.NewReader("ok"))
	base := fakeBase(func(req *http.Request) (*http.Response, error) {
		got = req
		resp := textResponse(req, 200, "ok", nil)
		resp.Body = body
		return resp, nil
	})
	tr := towerhttp.NewTransport(base, tower.Stack[*http.Request, *http.Response]())
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://x/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got != req {
		t.Errorf("the base got a copy of the request, want the request itself")
	}
	if resp.Body != body {
		t.Errorf("got a response body of type %T, want the base's own", resp.Body)
	}
}

// countedService is a client stack that records its Close.
type countedService struct {
	clientService
	id     int
	closed *[]int
}

func (s countedService) Close() error {
	*s.closed = append(*s.closed, s.id)
	return nil
}

// WithMaxHosts(2) over hosts a, b, a, c, a, b: each new host's stack
// takes the place of the one least recently used, which is closed: c's
// that of b (used before a's second request), and b's new one that of c
// (used before a's third).
func TestTransportDropsLeastRecentlyUsed(t *testing.T) {
	var built, closed []int
	counted := tower.LayerFunc[*http.Request, *http.Response](func(inner clientService) clientService {
		built = append(built, len(built)+1)
		return countedService{clientService: inner, id: len(built), closed: &closed}
	})
	base := fakeBase(func(req *http.Request) (*http.Response, error) {
		return textResponse(req, 200, req.URL.Host, nil), nil
	})
	tr := towerhttp.NewTransport(base, counted, towerhttp.WithMaxHosts(2))
	for _, host := range []string{"a", "b", "a", "c", "a", "b"} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+host+"/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		resp.Body.Close()
	}
	// a: 1, b: 2, c: 3 (dropping b's 2), b: 4 (dropping c's 3).
	if fmt.Sprint(built, closed) != "[1 2 3 4] [2 3]" {
		t.Errorf("got stacks %v built and %v closed, want [1 2 3 4] and [2 3]", built, closed)
	}
}

// An endpoint sends the request to its target with the request's Host
// header: req.Host when it is set, even to another name than its URL's,
// and the URL's host when it is not.
func TestEndpointKeepsHostHeader(t *testing.T) {
	for _, tt := range []struct {
		name, host, want string
	}{
		{"Host set", "virtual.example", "virtual.example"},
		{"Host empty", "", "svc.example"},
	} {
		synctest.Test(t, func(t *testing.T) {
			var got string
			base := fakeBase(func(req *http.Request) (*http.Response, error) {
				got = req.Host + " " + req.URL.Host + req.URL.Path
				return textResponse(req, 200, "ok", nil), nil
			})
			ep := towerhttp.NewEndpoint(base, mustParse(t, "http://backend:8080"), tower.Stack[*http.Request, *http.Response]())
			tr := towerhttp.NewBalancedTransport(discover.NewList(ep), tower.Stack[*http.Request, *http.Response]())
			defer tr.Close()
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc.example/path", nil)
			req.Host = tt.host
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := tt.want + " backend:8080/path"; got != want {
				t.Errorf("%s: the base got Host, URL host and path %q, want %q", tt.name, got, want)
			}
		})
	}
}

// BodyCompletion counts a request as pending until its body is read to
// its EOF: a body read in part, even all of its bytes but not its EOF,
// keeps it pending.
func TestBodyCompletionOnlyAtEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			return textResponse(req, 200, "body", nil), nil
		})
		pending := load.NewPendingRequests(
			towerhttp.NewEndpoint(base, mustParse(t, "http://x"), tower.Stack[*http.Request, *http.Response]()),
			load.WithCompletion[*http.Response](towerhttp.BodyCompletion{}),
		)
		tr := towerhttp.NewBalancedTransport(discover.NewList[endpoint](pending), tower.Stack[*http.Request, *http.Response]())
		defer tr.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		buf := make([]byte, 4)
		for _, step := range []struct {
			n    int
			want float64
		}{{2, 1}, {2, 1}, {0, 0}} {
			n, err := resp.Body.Read(buf[:max(step.n, 1)])
			if n != step.n || (n == 0) != (err == io.EOF) {
				t.Fatalf("read %d bytes, %v; want %d", n, err, step.n)
			}
			if got := pending.Load(); got != step.want {
				t.Errorf("after a read of %d bytes (%v): got load %v, want %v", n, err, got, step.want)
			}
		}
	})
}

// The route of a ServeMux pattern with no method is the pattern without
// the blanks that may open it: " /items" (which net/http takes as a
// pattern for every method) is the route "/items".
func TestRequestMetricsRouteWithLeadingBlank(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got requests
		mux := http.NewServeMux()
		mux.HandleFunc(" /items", func(http.ResponseWriter, *http.Request) {})
		mux.HandleFunc("\t/tabbed", func(http.ResponseWriter, *http.Request) {})
		h := towerhttp.NewHandler(mux, tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithRequestMetrics(&got))
		answer(h, "GET", "/items")
		answer(h, "PUT", "/tabbed")
		want := `GET "/items" http 200 served 0s` + "\n" + `PUT "/tabbed" http 200 served 0s`
		if g := got.take(); g != want {
			t.Errorf("got\n%s\nwant\n%s", g, want)
		}
	})
}

// The status an error handler sends is reported from 200 up, 200 itself
// included, sent with WriteHeader and nothing written after it; a 1xx
// before it is not the response's status.
func TestRequestMetricsErrorHandlerStatus(t *testing.T) {
	shed := tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
		return towerhttp.Response{}, loadshed.ErrOverloaded
	})
	for _, tt := range []struct {
		name  string
		codes []int
		want  string
	}{
		{"200 alone", []int{http.StatusOK}, `GET "" http 200 shed 0s`},
		{"103 then 503", []int{http.StatusEarlyHints, http.StatusServiceUnavailable}, `GET "" http 503 shed 0s`},
	} {
		synctest.Test(t, func(t *testing.T) {
			var got requests
			h := towerhttp.NewServiceHandler(shed, towerhttp.WithRequestMetrics(&got),
				towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
					for _, code := range tt.codes {
						w.WriteHeader(code)
					}
				}))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			if g := got.take(); g != tt.want {
				t.Errorf("%s: got %s, want %s", tt.name, g, tt.want)
			}
		})
	}
}
