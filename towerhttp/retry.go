package towerhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/towergo/tower/retry"
)

// DefaultMaxRetryAfter is the longest Retry-After a [RetryPolicy] waits
// for unless [WithMaxRetryAfter] says otherwise: room for a server that
// asks for a few seconds while a burst passes, short enough that a caller
// is not kept waiting on one that asks for minutes (it gets the response).
const DefaultMaxRetryAfter = 10 * time.Second

// A RetryPolicy is a retry.Policy for HTTP clients, for a client stack's
// RetryPolicy. It builds on retry.StandardPolicy, which counts attempts,
// waits the backoff, draws on a budget and gives up when the deadline
// leaves too little time; it adds what HTTP needs.
//
// An [Idempotent] request is retried after an error, except
// context.Canceled and a *tls.CertificateVerificationError, and after a
// 429, 502, 503 or 504. Any other request is retried only when the server
// cannot have acted on it: after a dial error (a *net.OpError with Op
// "dial"), a refusal by the client stack below the Retry
// (tower.IsOverloaded, IsUnavailable or IsThrottled), or a 429. A 502, 503
// or 504 is not enough: a gateway may have passed the request on. Give
// [RetryRules] to [NewRetryPolicyFor] to change these defaults.
//
// A 429 or 503 with a Retry-After ([RetryAfter]) waits the longer of it
// and the backoff; one longer than [WithMaxRetryAfter] allows is not
// retried: the caller gets the response. A body is sent again through a
// copy made by [CloneRequest]; a request with a body and no GetBody that
// would be retried fails with a [*ReplayError] instead (a budget has
// already paid for the retry). The response of a retried attempt is
// discarded first (see the package doc).
//
// A RetryPolicy keeps no state per request and is safe for concurrent use.
// The zero RetryPolicy is not usable: build one with [NewRetryPolicy] or
// [NewRetryPolicyFor].
type RetryPolicy struct {
	idempotent   *retry.StandardPolicy[*http.Request, *http.Response] // for requests isIdempotent reports true for
	unsent       *retry.StandardPolicy[*http.Request, *http.Response] // for the others
	isIdempotent func(*http.Request) bool
}

// RetryRules say what a [RetryPolicy] retries where the defaults do not
// suit (a proxy that retries 502 and 503 only). The zero RetryRules are the
// defaults of [NewRetryPolicy].
type RetryRules struct {
	// Statuses are the statuses after which an idempotent request is
	// retried; nil means 429, 502, 503 and 504, and an empty list none.
	// Any other request is retried after a 429 only, if Statuses holds
	// it. Each status must be between 100 and 599.
	Statuses []int
	// Idempotent reports whether a request is retried as an idempotent
	// one; nil means [Idempotent]. One that reports true for every
	// request retries a POST the server may have acted on: only for
	// servers that do not mind getting a request twice.
	Idempotent func(*http.Request) bool
}

// defaultRetryStatuses are the statuses retried unless RetryRules says
// otherwise.
var defaultRetryStatuses = []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// statusSet is a bitset of statuses, looked up without a loop or an
// allocation.
type statusSet [10]uint64 // 0 to 639

func newStatusSet(fn string, codes []int) *statusSet {
	s := new(statusSet)
	for _, c := range codes {
		if c < 100 || c > 599 {
			panic(fmt.Sprintf("%s: status %d is not between 100 and 599", fn, c))
		}
		s[c>>6] |= 1 << (c & 63)
	}
	return s
}

func (s *statusSet) has(c int) bool {
	return c >= 0 && c < 640 && s[c>>6]&(1<<(c&63)) != 0
}

// NewRetryPolicy returns a RetryPolicy with opts, the options of a
// retry.StandardPolicy: retry.WithMaxAttempts (default 3),
// retry.WithBackoff (default none), retry.WithBudget (default none; shared
// by all requests whatever their method), and [WithMaxRetryAfter] or
// retry.WithPushback for Retry-After. It panics if an option is nil.
func NewRetryPolicy(opts ...retry.PolicyOption) *RetryPolicy {
	return newRetryPolicy("towerhttp.NewRetryPolicy", RetryRules{}, opts)
}

// NewRetryPolicyFor returns a RetryPolicy as [NewRetryPolicy] does that
// retries what rules say:
//
//	towerhttp.NewRetryPolicyFor(towerhttp.RetryRules{Statuses: []int{502, 503}},
//		retry.WithMaxAttempts(2))
//
// It panics if a status is not between 100 and 599, or an option is nil.
func NewRetryPolicyFor(rules RetryRules, opts ...retry.PolicyOption) *RetryPolicy {
	return newRetryPolicy("towerhttp.NewRetryPolicyFor", rules, opts)
}

func newRetryPolicy(fn string, rules RetryRules, opts []retry.PolicyOption) *RetryPolicy {
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("%s: option %d is nil", fn, i))
		}
	}
	codes := rules.Statuses
	if codes == nil {
		codes = defaultRetryStatuses
	}
	set := newStatusSet(fn, codes)
	isIdempotent := rules.Idempotent
	if isIdempotent == nil {
		isIdempotent = Idempotent
	}
	all := append([]retry.PolicyOption{retry.WithPushback(RetryAfter, DefaultMaxRetryAfter)}, opts...)
	return &RetryPolicy{
		idempotent:   retry.NewPolicy[*http.Request](set.retryIdempotent, all...),
		unsent:       retry.NewPolicy[*http.Request](set.retryUnsent, all...),
		isIdempotent: isIdempotent,
	}
}

// WithMaxRetryAfter sets the longest Retry-After a [RetryPolicy] waits
// for; a response that asks for longer is the caller's. The default is
// [DefaultMaxRetryAfter]. It is retry.WithPushback([RetryAfter], max), and
// panics if max is not positive.
func WithMaxRetryAfter(max time.Duration) retry.PolicyOption {
	if max <= 0 {
		panic(fmt.Sprintf("towerhttp.WithMaxRetryAfter: max must be positive, got %v", max))
	}
	return retry.WithPushback(RetryAfter, max)
}

// Clone returns a copy of req for the next attempt: req itself if it has
// no body, a copy by [CloneRequest] if its body can be made again, and
// req itself otherwise, which Retry then refuses to send again.
func (p *RetryPolicy) Clone(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if c, ok := CloneRequest(req); ok {
		return c, true
	}
	return req, true
}

// Retry decides on a's result as [RetryPolicy] says. Before it returns
// true, it drains and closes the attempt's response.
func (p *RetryPolicy) Retry(ctx context.Context, a *retry.Attempt[*http.Request, *http.Response]) (time.Duration, bool) {
	std := p.unsent
	if p.isIdempotent(a.Req) {
		std = p.idempotent
	}
	wait, again := std.Retry(ctx, a)
	if !again {
		return 0, false
	}
	res := a.Res
	if res != nil {
		discardAttempt(ctx, res)
	}
	if !replayable(a.Req) {
		e := &ReplayError{Method: a.Req.Method, Err: a.Err}
		if res != nil {
			e.StatusCode = res.StatusCode
		}
		a.Res, a.Err = nil, e
		return 0, false
	}
	return wait, true
}

// discardAttempt drains and closes res, a retried attempt's response,
// through ctx's trip if it has one, so that the trip does not close it
// again when the request ends.
func discardAttempt(ctx context.Context, res *http.Response) {
	if t := tripFrom(ctx); t != nil {
		t.discard(res)
		return
	}
	discard(res)
}

// replayable reports whether req can be sent again: it has no body, or
// GetBody to make it anew.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// Idempotent reports whether sending req twice has the effect of sending
// it once, as a [RetryPolicy] decides it: its method is idempotent by RFC
// 9110 (GET, also for an empty method, HEAD, OPTIONS, TRACE, PUT, DELETE),
// or it carries an Idempotency-Key or X-Idempotency-Key header, as
// net/http's Transport takes them.
func Idempotent(req *http.Request) bool {
	if m := req.Method; m == "" || m == http.MethodGet || m == http.MethodHead ||
		m == http.MethodOptions || m == http.MethodTrace || m == http.MethodPut || m == http.MethodDelete {
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// retryIdempotent is the classifier of idempotent requests.
func (s *statusSet) retryIdempotent(res *http.Response, err error) bool {
	if err != nil {
		_, untrusted := errors.AsType[*tls.CertificateVerificationError](err)
		return !untrusted && !errors.Is(err, context.Canceled)
	}
	return s.has(res.StatusCode)
}

// retryUnsent is the classifier of the other requests.
func (s *statusSet) retryUnsent(res *http.Response, err error) bool {
	if err != nil {
		return retryLater(err) || dialFailed(err)
	}
	return res.StatusCode == http.StatusTooManyRequests && s.has(http.StatusTooManyRequests)
}

// dialFailed reports whether err says that no connection could be made.
func dialFailed(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	return ok && op.Op == "dial"
}

// RetryAfter returns the wait the Retry-After header of res asks for, and
// true, if res is a 429 or a 503 with a readable Retry-After (RFC 9110,
// 10.2.3): a number of seconds (math.MaxInt64 if too large for a
// time.Duration), or an HTTP-date, whose wait is the time until then, 0 if
// past. Any other header, response, or an error gives false. It is the
// pushback function of a [RetryPolicy], for retry.WithPushback.
func RetryAfter(res *http.Response, err error) (time.Duration, bool) {
	if err != nil || res == nil || (res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable) {
		return 0, false
	}
	return parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
}

// parseRetryAfter reads a Retry-After value at time now.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if !allDigits(v) {
		t, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		return max(t.Sub(now), 0), true
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs > math.MaxInt64/int64(time.Second) { // only ErrRange: beyond any wait
		return math.MaxInt64, true
	}
	return time.Duration(secs) * time.Second, true
}

// allDigits reports whether v, not empty, is made of ASCII digits only:
// delay-seconds has no sign.
func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// A ReplayError is the error of a request that a [RetryPolicy] would have
// retried, but whose body cannot be sent again: it has no GetBody. The
// attempt's response, if any, has been closed.
type ReplayError struct {
	// Method is the request's method.
	Method string
	// StatusCode is the status of the attempt's response, or 0 if the
	// attempt failed with Err.
	StatusCode int
	// Err is the attempt's error, or nil if it had a response.
	Err error
}

// Error says what could not be retried and how to make the request
// replayable.
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
