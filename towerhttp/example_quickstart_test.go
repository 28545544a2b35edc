package towerhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
)

// A server that protects its handler: a request that finds the one place
// in the handler taken is turned away at once with 503, and each request
// gets a second at most. The Timeout sits above the limit, so that a
// handler it gives up on keeps its place until it returns.
func Example_server() {
	busy, done := make(chan struct{}), make(chan struct{})
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			busy <- struct{}{}
			<-done
		}
		io.WriteString(w, "hello")
	})

	protect := towerhttp.ServerStack().
		LoadShed().           // a request that finds the handler full: 503 at once
		Timeout(time.Second). // a request let in: a second at most
		ConcurrencyLimit(1)   // one request in the handler at a time
	srv := httptest.NewServer(towerhttp.NewHandler(app, protect))
	defer srv.Close()

	slow := make(chan string)
	go func() { slow <- statusAndBody(http.DefaultClient, srv.URL+"/slow") }()
	<-busy
	fmt.Println("while /slow runs:", statusAndBody(http.DefaultClient, srv.URL))
	close(done)
	fmt.Println("/slow:", <-slow)
	// Output:
	// while /slow runs: 503 service overloaded
	// /slow: 200 hello
}

// A client whose requests are retried when they fail or the server
// answers 503, within a second for all the attempts, with at most 8 in
// flight per host.
func Example_client() {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	retryable := func(resp *http.Response, err error) bool {
		return err != nil || resp.StatusCode == http.StatusServiceUnavailable
	}
	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport,
		towerhttp.ClientStack().
			Timeout(time.Second).                       // every attempt within a second
			Retry(retryable, retry.WithMaxAttempts(3)). // a failed attempt sent again
			ConcurrencyLimit(8))}                       // at most 8 in flight per host

	fmt.Println(statusAndBody(client, srv.URL), "after", requests.Load(), "requests")
	// Output: 200 hello after 2 requests
}

// statusAndBody GETs url with client, and returns the status and the
// body on a line.
func statusAndBody(client *http.Client, url string) string {
	resp, err := client.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}
