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

// A client that retries with the ready-made policy: the server refuses the
// first POST with 429 and Retry-After: 0, and the policy sends it again,
// with its body, made anew by GetBody.
func ExampleNewRetryPolicy() {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if attempts.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprintf(w, "got %q on attempt %d", b, attempts.Load())
	}))
	defer srv.Close()

	stack := towerhttp.ClientStack().RetryPolicy(towerhttp.NewRetryPolicy(
		retry.WithMaxAttempts(3),
		retry.WithBackoff(retry.NewFullJitterBackoff(10*time.Millisecond, time.Second)),
		towerhttp.WithMaxRetryAfter(5*time.Second), // longer Retry-Afters are the caller's
	))
	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport, stack)}
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output: 200 got "payload" on attempt 2
}

// A client that retries a GET after a 500, which the default rules do not
// retry, and no 429: RetryRules lists the statuses.
func ExampleNewRetryPolicyFor() {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) == 1 {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "ok on attempt %d", attempts.Load())
	}))
	defer srv.Close()

	policy := towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Statuses: []int{500, 502, 503}},
		retry.WithMaxAttempts(2))
	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport, towerhttp.ClientStack().RetryPolicy(policy))}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output: 200 ok on attempt 2
}
