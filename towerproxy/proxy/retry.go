package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
)

// A retrier is an upstream's retry policy: towerhttp's, with the statuses
// and the methods the configuration lists, its attempts and its budget,
// for the requests whose body can be sent again. A request whose body
// cannot (longer than maxReplay, or of unknown length) is sent once, and
// its answer, whatever it is, goes to the client.
//
// Retries happen inside the reverse proxy's round trip, before it has
// written anything to the client: a response whose header has reached
// the client is never retried, by construction.
type retrier struct {
	*towerhttp.RetryPolicy
	budget retry.Budget // also the hedges'
}

// maxReplay is the longest request body kept to be sent again: a request
// with a body of known length up to it is read whole before it is sent,
// as nginx buffers request bodies, and Linkerd retries bodies up to the
// same 64 KiB.
const maxReplay = 64 << 10

// newRetrier returns cfg's retry policy, or nil if cfg tries a request
// once and hedges none.
func newRetrier(cfg *Upstream, obs *upstreamObs) *retrier {
	if cfg.Retry.Attempts == 1 && cfg.Hedge == nil {
		return nil
	}
	budget := obs.budget(retry.NewTPSBudget(10*time.Second, 10, float64(cfg.Retry.Budget)))
	rules := towerhttp.RetryRules{Statuses: cfg.Retry.Statuses}
	if cfg.Retry.Methods == "all" {
		rules.Idempotent = func(*http.Request) bool { return true }
	}
	return &retrier{
		RetryPolicy: towerhttp.NewRetryPolicyFor(rules, retry.WithMaxAttempts(cfg.Retry.Attempts), retry.WithBudget(budget)),
		budget:      budget,
	}
}

// Clone refuses a request whose body cannot be sent again, which is then
// tried once.
func (r *retrier) Clone(req *http.Request) (*http.Request, bool) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return req, false
	}
	return r.RetryPolicy.Clone(req)
}

// hedgeBudget is the budget hedges draw on: the retries', into which the
// retry policy deposits once per request, or, without retries, the same
// budget with the hedge depositing.
func (r *retrier) hedgeBudget(cfg *Upstream) hedge.Option {
	if cfg.Retry.Attempts > 1 {
		return hedge.WithBudget(retry.DrawOnly(r.budget))
	}
	return hedge.WithBudget(r.budget)
}

// replayable returns h behind a handler that reads a request body of
// known length up to maxReplay whole, so that the retries and hedges can
// send it again. A body that cannot be read whole is answered by fail, as
// the reverse proxy's ErrorHandler answers it (400 for one that ends
// short, 408 for one too slow, nothing to a client gone); one over the
// server's limit is left to the towerhttp.Handler, which answers 413.
func (r *retrier) replayable(h http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil && req.ContentLength > 0 && req.ContentLength <= maxReplay {
			buf := make([]byte, req.ContentLength)
			if _, err := io.ReadFull(req.Body, buf); err != nil {
				if _, tooLarge := errors.AsType[*http.MaxBytesError](err); !tooLarge {
					if !errors.Is(err, errClientBody) {
						err = fmt.Errorf("%w: %w", errClientBody, err) // it ended short
					}
					fail(w, req, err)
				}
				return
			}
			req.Body.Close()
			// The client has had its 100 Continue (net/http sends it at
			// the first read) and the body is in hand: the backend is not
			// asked for one, which ReverseProxy would pass on as a second.
			delete(req.Header, "Expect")
			req.Body = io.NopCloser(bytes.NewReader(buf))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
		}
		h.ServeHTTP(w, req)
	})
}

// hedgePolicy hedges idempotent requests whose body, if any, can be sent
// again.
type hedgePolicy struct{}

func (hedgePolicy) Clone(req *http.Request) (*http.Request, bool) {
	if !towerhttp.Idempotent(req) {
		return nil, false
	}
	return towerhttp.CloneRequest(req)
}

func (hedgePolicy) CanRetry(*http.Request) bool { return true }
