package towerhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// LoadShed > Timeout > ConcurrencyLimit(1) in front of a handler: while
// one request is being served, the next is turned away at once with 503
// and Retry-After, before anything of it is read. The Timeout sits above
// the limit, so that a handler it gives up on keeps its permit until it
// returns.
func ExampleNewHandler() {
	arrived, release := make(chan struct{}), make(chan struct{})
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
		io.WriteString(w, "hello")
	})
	srv := httptest.NewServer(towerhttp.NewHandler(hello, tower.Stack(
		loadshed.NewLayer[*http.Request, towerhttp.Response](),
		timeout.NewLayer[*http.Request, towerhttp.Response](10*time.Second),
		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1),
	)))
	defer srv.Close()

	slow := make(chan string)
	go func() { slow <- fetch(srv.URL + "/slow") }()
	<-arrived
	fmt.Println(fetch(srv.URL + "/fast"))
	close(release)
	fmt.Println(<-slow)
	// Output:
	// 503 Retry-After=1 service overloaded
	// 200 Retry-After= hello
}

// fetch GETs url and returns its status, Retry-After and body on a line.
func fetch(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d Retry-After=%s %s", resp.StatusCode, resp.Header.Get("Retry-After"), strings.TrimSpace(string(b)))
}

// An error handler of one's own: 429 and JSON for a request shed, the
// default status for the rest. Retry-After is already set.
func ExampleWithErrorHandler() {
	shed := tower.ServiceFunc[*http.Request, towerhttp.Response](func(_ context.Context, _ *http.Request) (towerhttp.Response, error) {
		return towerhttp.Response{}, loadshed.ErrOverloaded
	})
	h := towerhttp.NewServiceHandler(shed, towerhttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
		code := towerhttp.StatusCode(err)
		if errors.Is(err, loadshed.ErrOverloaded) {
			code = http.StatusTooManyRequests
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, "{\"error\": %q}\n", err)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Print(rec.Code, " Retry-After=", rec.Header().Get("Retry-After"), " ", rec.Body.String())
	// Output: 429 Retry-After=1 {"error": "service overloaded"}
}

// bodyRetryPolicy retries errors and 503s, three attempts at most, and
// sends the body again: its Clone makes a copy whose body comes from
// GetBody. The transport drains and closes the body of each 503 retried.
type bodyRetryPolicy struct {
	*retry.StandardPolicy[*http.Request, *http.Response]
}

func newBodyRetryPolicy() bodyRetryPolicy {
	return bodyRetryPolicy{retry.NewPolicy[*http.Request, *http.Response](func(resp *http.Response, err error) bool {
		return err != nil || resp.StatusCode == http.StatusServiceUnavailable
	}, retry.WithMaxAttempts(3))}
}

// Clone returns a copy of req that can be sent again, or false for a body
// without GetBody, which is then sent once.
func (bodyRetryPolicy) Clone(req *http.Request) (*http.Request, bool) {
	return towerhttp.CloneRequest(req)
}

// A client that retries: the server answers 503 twice, and the third
// attempt, with the same body, succeeds.
func ExampleNewTransport() {
	var (
		mu       sync.Mutex
		attempts int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		attempts++
		n := attempts
		mu.Unlock()
		if n < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "got %q on attempt %d", b, n)
	}))
	defer srv.Close()

	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport,
		retry.NewLayer[*http.Request, *http.Response](newBodyRetryPolicy()))}
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output: 200 got "payload" on attempt 3
}

// Two backends, each under ConcurrencyLimit(1): a backend busy with a
// request is not ready, so the balancer sends the next request to the
// other one. The request's URL names the service; the endpoint picked
// says where it goes.
func ExampleNewBalancedTransport() {
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	backend := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-release
			fmt.Fprintf(w, "%s served %s%s", name, r.Host, r.URL.Path)
		}))
	}
	a, b := backend("a"), backend("b")
	defer a.Close()
	defer b.Close()

	perBackend := limit.NewConcurrencyLayer[*http.Request, *http.Response](1)
	endpoint := func(srv *httptest.Server) load.Service[*http.Request, *http.Response] {
		u, _ := url.Parse(srv.URL)
		return towerhttp.NewEndpoint(http.DefaultTransport, u, perBackend)
	}
	tr := towerhttp.NewBalancedTransport(discover.NewList(endpoint(a), endpoint(b)),
		tower.Stack[*http.Request, *http.Response]()) // a retry would go here
	defer tr.Close()
	client := &http.Client{Transport: tr}

	answers := make(chan string, 2)
	for range 2 {
		go func() {
			resp, err := client.Get("http://api.internal/hello")
			if err != nil {
				answers <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			answers <- string(b)
		}()
		<-arrived // the first request holds its backend until released
	}
	close(release)
	got := []string{<-answers, <-answers}
	slices.Sort(got)
	fmt.Println(strings.Join(got, "\n"))
	// Output:
	// a served api.internal/hello
	// b served api.internal/hello
}
