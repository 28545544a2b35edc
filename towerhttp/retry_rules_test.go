package towerhttp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// RetryRules' statuses replace the default list: 500 and 503 are retried,
// 502, 504 and 429 are not; a POST is retried after a 429 only if the
// list holds it.
func TestRetryPolicyForStatuses(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		method   string
		code     int
		want     int // attempts
	}{
		{"listed 500", []int{500, 503}, http.MethodGet, 500, 3},
		{"listed 503", []int{500, 503}, http.MethodGet, 503, 3},
		{"default 502 not listed", []int{500, 503}, http.MethodGet, 502, 1},
		{"default 504 not listed", []int{500, 503}, http.MethodGet, 504, 1},
		{"default 429 not listed", []int{500, 503}, http.MethodGet, 429, 1},
		{"POST, 429 not listed", []int{500, 503}, http.MethodPost, 429, 1},
		{"POST, 429 listed", []int{429}, http.MethodPost, 429, 3},
		{"POST, 503 listed", []int{503}, http.MethodPost, 503, 1},
		{"empty list", []int{}, http.MethodGet, 503, 1},
		{"nil list is the default", nil, http.MethodGet, 429, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(reply{tt.code, ""})
				policy := towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Statuses: tt.statuses})
				client, bt := memServer(t, s, towerhttp.ClientStack().RetryPolicy(policy))
				code, _, err := do(t, client, tt.method, "body")
				if err != nil {
					t.Fatal(err)
				}
				if n := len(s.attempts()); n != tt.want || code != tt.code {
					t.Errorf("got %d after %d attempts, want %d after %d", code, n, tt.code, tt.want)
				}
				bt.check(t, tt.want)
			})
		})
	}
}

// RetryRules' Idempotent decides which requests are retried as idempotent
// ones: with one that says every request is, a POST is retried after a
// 503 and after a read error, with its body each time; with one that says
// none is, a GET is retried after a 429 only.
func TestRetryPolicyForIdempotent(t *testing.T) {
	all := func(*http.Request) bool { return true }
	none := func(*http.Request) bool { return false }
	t.Run("all, 503", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newScript(reply{503, ""}, reply{503, ""}, reply{200, ""})
			policy := towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Idempotent: all})
			client, bt := memServer(t, s, towerhttp.ClientStack().RetryPolicy(policy))
			code, _, err := do(t, client, http.MethodPost, "payload")
			if err != nil || code != 200 {
				t.Fatalf("got %d, %v; want 200", code, err)
			}
			if got := strings.Join(s.bodies(), ","); got != "payload,payload,payload" {
				t.Errorf("got bodies %q, want the payload three times", got)
			}
			bt.check(t, 3)
		})
	})
	for _, tt := range []struct {
		name   string
		rule   func(*http.Request) bool
		method string
		err    error
		want   int
	}{
		{"all, read error", all, http.MethodPost, &net.OpError{Op: "read", Err: errTest}, 3},
		{"none, read error", none, http.MethodGet, &net.OpError{Op: "read", Err: errTest}, 1},
		{"none, dial error", none, http.MethodGet, &net.OpError{Op: "dial", Err: errTest}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			svc := retry.New(tower.ServiceFunc[*http.Request, *http.Response](func(context.Context, *http.Request) (*http.Response, error) {
				n++
				return nil, tt.err
			}), towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Idempotent: tt.rule}))
			req := httptest.NewRequest(tt.method, "/", nil)
			if _, err := tower.Call(t.Context(), svc, req); err != tt.err {
				t.Errorf("got %v, want %v", err, tt.err)
			}
			if n != tt.want {
				t.Errorf("got %d attempts, want %d", n, tt.want)
			}
		})
	}
	t.Run("none, 503 and 429", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			for _, c := range []struct{ code, want int }{{503, 1}, {429, 3}} {
				s := newScript(reply{c.code, ""})
				policy := towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Idempotent: none})
				client, _ := memServer(t, s, towerhttp.ClientStack().RetryPolicy(policy))
				code, _, err := do(t, client, http.MethodGet, "")
				if err != nil || code != c.code || len(s.attempts()) != c.want {
					t.Errorf("GET answered %d: got %d, %v after %d attempts, want %d after %d", c.code, code, err, len(s.attempts()), c.code, c.want)
				}
			}
		})
	})
}

// A status outside 100 to 599 and a nil option panic, naming the
// constructor.
func TestRetryPolicyForBadInput(t *testing.T) {
	towertest.Panics(t, "towerhttp.NewRetryPolicyFor: status 600 is not between 100 and 599", func() {
		towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Statuses: []int{503, 600}})
	})
	towertest.Panics(t, "towerhttp.NewRetryPolicyFor: status 99 is not between 100 and 599", func() {
		towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Statuses: []int{99}})
	})
	towertest.Panics(t, "towerhttp.NewRetryPolicyFor: option 0 is nil", func() {
		towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{}, nil)
	})
}

// A policy with rules allocates no more than the default one for a
// request answered at once: nothing.
func TestRetryPolicyForAllocs(t *testing.T) {
	resp := &http.Response{StatusCode: 200}
	svc := retry.New(tower.ServiceFunc[*http.Request, *http.Response](func(context.Context, *http.Request) (*http.Response, error) {
		return resp, nil
	}), towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Statuses: []int{500, 502, 503}, Idempotent: func(*http.Request) bool { return true }}))
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() {
		p, _ := svc.Ready(ctx)
		p.Call(ctx, req)
	}); n != 0 {
		t.Errorf("got %v allocations, want 0", n)
	}
}
