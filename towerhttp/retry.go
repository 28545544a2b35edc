package towerhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/retry"
)

// DefaultMaxRetryAfter is the longest Retry-After a [RetryPolicy] waits
// for unless [WithMaxRetryAfter] says otherwise.
const DefaultMaxRetryAfter = 10 * time.Second

// A RetryPolicy is a retry.Policy for HTTP clients: a
// retry.StandardPolicy, with what HTTP needs.
//
// An [Idempotent] request is retried after an error, except
// context.Canceled and a *tls.CertificateVerificationError, and after a
// 429, 502, 503 or 504. Any other request is retried only when the server
// cannot have acted on it: after a dial error (a *net.OpError with Op
// "dial"), a refusal by the client stack below the Retry
// (tower.IsOverloaded, IsUnavailable or IsThrottled), or a 429. [RetryRules]
// change these defaults.
//
// A 429 or 503 with a Retry-After ([RetryAfter]) waits the longer of it
// and the backoff; one longer than [WithMaxRetryAfter] allows is not
// retried: the caller gets the response. A request with a body and no
// GetBody that would be retried fails with a [*ReplayError] instead.
//
// A RetryPolicy is safe for concurrent use. The zero RetryPolicy is not
// usable: build one with [NewRetryPolicy] or [NewRetryPolicyFor].
type RetryPolicy struct {
	idempotent   *retry.StandardPolicy[*http.Request, *http.Response]
	unsent       *retry.StandardPolicy[*http.Request, *http.Response] // for requests not idempotent
	isIdempotent func(*http.Request) bool
}

// RetryRules say what a [RetryPolicy] retries where the defaults do not
// suit; the zero RetryRules are the defaults of [NewRetryPolicy].
type RetryRules struct {
	// Statuses are the statuses after which an idempotent request is
	// retried; nil means 429, 502, 503 and 504, and an empty list none.
	// Any other request is retried after a 429 only, if Statuses holds
	// it. Each status must be between 100 and 599.
	Statuses []int
	// Idempotent reports whether a request is retried as an idempotent
	// one; nil means [Idempotent]. One that reports true for every
	// request retries a POST the server may have acted on.
	Idempotent func(*http.Request) bool
}

// NewRetryPolicy returns a RetryPolicy with opts, the options of a
// retry.StandardPolicy and [WithMaxRetryAfter]; a budget is shared by all
// requests whatever their method. It panics if an option is nil.
func NewRetryPolicy(opts ...retry.PolicyOption) *RetryPolicy {
	return newRetryPolicy("towerhttp.NewRetryPolicy", RetryRules{}, opts)
}

// NewRetryPolicyFor returns a RetryPolicy as [NewRetryPolicy] does that
// retries what rules say. It panics if a status is not between 100 and
// 599, or an option is nil.
func NewRetryPolicyFor(rules RetryRules, opts ...retry.PolicyOption) *RetryPolicy {
	return newRetryPolicy("towerhttp.NewRetryPolicyFor", rules, opts)
}

func newRetryPolicy(fn string, rules RetryRules, opts []retry.PolicyOption) *RetryPolicy {
	for i, o := range opts {
		option.PanicIf(o == nil, "%s: option %d is nil", fn, i)
	}
	statuses := rules.Statuses
	if statuses == nil {
		statuses = []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	}
	var retried [600]bool // by status
	for _, c := range statuses {
		option.PanicIf(c < 100 || c > 599, "%s: status %d is not between 100 and 599", fn, c)
		retried[c] = true
	}
	retryIdempotent := func(res *http.Response, err error) bool {
		if err != nil {
			_, untrusted := errors.AsType[*tls.CertificateVerificationError](err)
			return !untrusted && !errors.Is(err, context.Canceled)
		}
		c := res.StatusCode
		return c >= 0 && c < len(retried) && retried[c]
	}
	retryUnsent := func(res *http.Response, err error) bool {
		if err != nil {
			op, ok := errors.AsType[*net.OpError](err)
			return retryLater(err) || ok && op.Op == "dial"
		}
		return res.StatusCode == http.StatusTooManyRequests && retried[http.StatusTooManyRequests]
	}
	isIdempotent := rules.Idempotent
	if isIdempotent == nil {
		isIdempotent = Idempotent
	}
	all := append([]retry.PolicyOption{retry.WithPushback(RetryAfter, DefaultMaxRetryAfter)}, opts...)
	return &RetryPolicy{
		idempotent:   retry.NewPolicy[*http.Request](retryIdempotent, all...),
		unsent:       retry.NewPolicy[*http.Request](retryUnsent, all...),
		isIdempotent: isIdempotent,
	}
}

// WithMaxRetryAfter sets the longest Retry-After a [RetryPolicy] waits
// for; a response that asks for longer is the caller's. The default is
// [DefaultMaxRetryAfter]. It is retry.WithPushback([RetryAfter], max), and
// panics if max is not positive.
func WithMaxRetryAfter(max time.Duration) retry.PolicyOption {
	option.PanicIf(max <= 0, "towerhttp.WithMaxRetryAfter: max must be positive, got %v", max)
	return retry.WithPushback(RetryAfter, max)
}

// Clone returns req for the next attempt, or if it has a body that can be
// made again, a copy by [CloneRequest].
func (p *RetryPolicy) Clone(req *http.Request) (*http.Request, bool) {
	if req.Body != nil && req.Body != http.NoBody {
		if c, ok := CloneRequest(req); ok {
			return c, true
		}
	}
	return req, true
}

// Retry decides on a's result as [RetryPolicy] says, and closes the
// response of an attempt it retries.
func (p *RetryPolicy) Retry(ctx context.Context, a *retry.Attempt[*http.Request, *http.Response]) (time.Duration, bool) {
	std := p.unsent
	if p.isIdempotent(a.Req) {
		std = p.idempotent
	}
	wait, again := std.Retry(ctx, a)
	if !again {
		return 0, false
	}
	status := 0
	if a.Res != nil {
		status = a.Res.StatusCode
		tripFrom(ctx).discard(a.Res) // so that the trip does not close it again
	}
	if a.Req.Body != nil && a.Req.Body != http.NoBody && a.Req.GetBody == nil {
		a.Res, a.Err = nil, &ReplayError{Method: a.Req.Method, StatusCode: status, Err: a.Err}
		return 0, false
	}
	return wait, true
}

// Idempotent reports whether req's method is idempotent by RFC 9110
// (GET, also for an empty method, HEAD, OPTIONS, TRACE, PUT, DELETE), or
// it carries an Idempotency-Key or X-Idempotency-Key header, as net/http's
// Transport takes them.
func Idempotent(req *http.Request) bool {
	if m := req.Method; m == "" || m == http.MethodGet || m == http.MethodHead ||
		m == http.MethodOptions || m == http.MethodTrace || m == http.MethodPut || m == http.MethodDelete {
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// RetryAfter returns the wait the Retry-After header of res asks for, and
// true, if res is a 429 or a 503 with a readable Retry-After (RFC 9110,
// 10.2.3): a number of seconds (math.MaxInt64 if too large for a
// time.Duration), or an HTTP-date, whose wait is the time until then, 0 if
// past. It is the pushback function of a [RetryPolicy].
func RetryAfter(res *http.Response, err error) (time.Duration, bool) {
	if err != nil || res == nil || (res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable) {
		return 0, false
	}
	v := res.Header.Get("Retry-After")
	secs, err := strconv.ParseUint(v, 10, 64) // delay-seconds has no sign
	switch {
	case err == nil && secs <= math.MaxInt64/uint64(time.Second):
		return time.Duration(secs) * time.Second, true
	case err == nil || errors.Is(err, strconv.ErrRange):
		return math.MaxInt64, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(time.Until(t), 0), true
}

// A ReplayError is the error of a request a [RetryPolicy] would have
// retried but whose body has no GetBody; any response has been closed.
type ReplayError struct {
	// Method is the request's method.
	Method string
	// StatusCode is the status of the attempt's response, or 0 if the
	// attempt failed with Err.
	StatusCode int
	// Err is the attempt's error, or nil if it had a response.
	Err error
}

// Error says what could not be retried and how to fix it.
func (e *ReplayError) Error() string {
	got := fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Err != nil {
		got = e.Err.Error()
	}
	return "towerhttp: cannot retry " + e.Method + " request after " + got +
		": its body cannot be replayed (Request.GetBody is nil); set GetBody," +
		" or make the request with http.NewRequest over a bytes.Reader, strings.Reader or bytes.Buffer"
}

// Unwrap returns the attempt's error.
func (e *ReplayError) Unwrap() error { return e.Err }

// CloneRequest returns a copy of req that can be sent after req has been,
// for the Clone of a retry.Policy or hedge.Policy, or nil and false for a
// request with a body and no GetBody. The copy's body calls GetBody when
// it is first read. The copy is shallow: it shares req's context, URL and
// header map.
func CloneRequest(req *http.Request) (*http.Request, bool) {
	replayable := req.Body == nil || req.Body == http.NoBody
	if !replayable && req.GetBody == nil {
		return nil, false
	}
	out := new(http.Request)
	*out = *req
	if !replayable {
		out.Body = &replayBody{get: req.GetBody}
	}
	return out, true
}

// replayBody is a request body made by GetBody when it is first read. A
// transport may close it from another goroutine than the reader's.
type replayBody struct {
	get func() (io.ReadCloser, error)

	mu  sync.Mutex
	rc  io.ReadCloser
	err error
}

func (b *replayBody) open() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rc == nil && b.err == nil {
		b.rc, b.err = b.get()
	}
	return b.rc, b.err
}

func (b *replayBody) Read(p []byte) (int, error) {
	rc, err := b.open()
	if err != nil {
		return 0, err
	}
	return rc.Read(p)
}

func (b *replayBody) Close() error {
	b.mu.Lock()
	rc := b.rc
	if rc == nil && b.err == nil {
		b.err = http.ErrBodyReadAfterClose // never opened: nothing to close
	}
	b.mu.Unlock()
	if rc == nil {
		return nil
	}
	return rc.Close()
}
