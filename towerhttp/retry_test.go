package towerhttp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// backoff is the backoff of the client: 50ms, then 100ms.
func backoff() retry.PolicyOption {
	return retry.WithBackoff(retry.NewExponentialBackoff(50*time.Millisecond, 100*time.Millisecond, 0))
}

func retrying(opts ...retry.PolicyOption) clientLayer {
	return towerhttp.ClientStack().RetryPolicy(towerhttp.NewRetryPolicy(opts...))
}

// do sends a request with method and body (none if body is "") to
// "http://mem/" and returns the status and the body of the answer.
func do(t *testing.T, client *http.Client, method, body string) (int, string, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, "http://mem/", r)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func durations(ds ...time.Duration) []time.Duration { return ds }

// The first failure, fixed: a 503 and then a 429 that both say
// Retry-After: 1 are retried a second later each, not after the backoff's
// 50ms and 100ms.
func TestRetryPolicyHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(reply{503, "1"}, reply{429, "1"}, reply{200, ""})
		client, bt := memServer(t, s, retrying(backoff()))
		code, body, err := do(t, client, http.MethodGet, "")
		if err != nil || code != 200 || body != "answer" {
			t.Fatalf("got %d %q %v, want 200 %q", code, body, err, "answer")
		}
		if got, want := s.attempts(), durations(0, time.Second, 2*time.Second); !reflect.DeepEqual(got, want) {
			t.Errorf("got attempts at %v, want %v", got, want)
		}
		bt.check(t, 3)
	})
}

// The wait is the longer of the Retry-After and the backoff; a response
// without Retry-After, or with one that cannot be read, waits the backoff.
func TestRetryPolicyRetryAfterOrBackoff(t *testing.T) {
	// synctest's clock starts at midnight UTC, 1 January 2000.
	tests := []struct {
		name       string
		retryAfter string
		want       time.Duration // the second attempt's time
	}{
		{"none", "", 50 * time.Millisecond},
		{"zero", "0", 50 * time.Millisecond},
		{"garbage", "soon", 50 * time.Millisecond},
		{"negative", "-1", 50 * time.Millisecond},
		{"seconds", "3", 3 * time.Second},
		{"date", "Sat, 01 Jan 2000 00:00:04 GMT", 4 * time.Second},
		{"date passed", "Fri, 31 Dec 1999 23:59:00 GMT", 50 * time.Millisecond},
		{"at the cap", "10", 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(reply{503, tt.retryAfter}, reply{200, ""})
				client, _ := memServer(t, s, retrying(backoff()))
				if code, _, err := do(t, client, http.MethodGet, ""); code != 200 {
					t.Fatalf("got %d %v, want 200", code, err)
				}
				if got, want := s.attempts(), durations(0, tt.want); !reflect.DeepEqual(got, want) {
					t.Errorf("got attempts at %v, want %v", got, want)
				}
			})
		})
	}
}

// A Retry-After beyond the cap is not waited for, nor retried sooner: the
// caller gets the response, with its Retry-After, at once. The cap is
// DefaultMaxRetryAfter, or what WithMaxRetryAfter sets.
func TestRetryPolicyRetryAfterCap(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		opts       []retry.PolicyOption
		want       []time.Duration
	}{
		{"beyond the default", "11", nil, durations(0)},
		{"an HTTP-date beyond", "Sat, 01 Jan 2000 00:00:11 GMT", nil, durations(0)},
		{"raised", "11", []retry.PolicyOption{towerhttp.WithMaxRetryAfter(11 * time.Second)}, durations(0, 11*time.Second)},
		{"lowered", "2", []retry.PolicyOption{towerhttp.WithMaxRetryAfter(time.Second)}, durations(0)},
		{"huge", "99999999999999999999", nil, durations(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(reply{429, tt.retryAfter}, reply{200, ""})
				client, bt := memServer(t, s, retrying(tt.opts...))
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://mem/", nil)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got := s.attempts(); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got attempts at %v, want %v", got, tt.want)
				}
				if len(tt.want) == 1 && (resp.StatusCode != 429 || resp.Header.Get("Retry-After") != tt.retryAfter) {
					t.Errorf("got %d Retry-After %q, want 429 Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"), tt.retryAfter)
				}
				bt.check(t, len(tt.want))
			})
		})
	}
}

// RetryAfter reads delta-seconds and the three forms of HTTP-date, of a
// 429 or a 503 only; a date in the past is no wait; anything else is
// ignored.
func TestRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tests := []struct {
			code  int
			value string
			want  time.Duration
			ok    bool
		}{
			{503, "1", time.Second, true},
			{429, "120", 2 * time.Minute, true},
			{429, "0", 0, true},
			{429, "9223372036", 9223372036 * time.Second, true},
			{429, "9223372037", math.MaxInt64, true},
			{429, "99999999999999999999", math.MaxInt64, true},
			{503, "Sat, 01 Jan 2000 00:00:30 GMT", 30 * time.Second, true},
			{503, "Saturday, 01-Jan-00 00:01:00 GMT", time.Minute, true},
			{503, "Sat Jan  1 00:00:02 2000", 2 * time.Second, true},
			{503, "Fri, 31 Dec 1999 23:00:00 GMT", 0, true},
			{503, "", 0, false},
			{503, "-1", 0, false},
			{503, "+1", 0, false},
			{503, "1.5", 0, false},
			{503, " 1", 0, false},
			{503, "1s", 0, false},
			{503, "tomorrow", 0, false},
			{500, "1", 0, false},
			{502, "1", 0, false},
			{200, "1", 0, false},
		}
		for _, tt := range tests {
			resp := &http.Response{StatusCode: tt.code, Header: http.Header{}}
			if tt.value != "" {
				resp.Header.Set("Retry-After", tt.value)
			}
			if got, ok := towerhttp.RetryAfter(resp, nil); got != tt.want || ok != tt.ok {
				t.Errorf("%d Retry-After %q: got %v %v, want %v %v", tt.code, tt.value, got, ok, tt.want, tt.ok)
			}
		}
		resp := &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"1"}}}
		if _, ok := towerhttp.RetryAfter(resp, errTest); ok {
			t.Error("an error with a response: got ok, want none")
		}
		if _, ok := towerhttp.RetryAfter(nil, errTest); ok {
			t.Error("an error: got ok, want none")
		}
	})
}

var errTest = errors.New("test error")

// The second failure, fixed: a POST refused with 429 is retried,
// with its body intact, made again by GetBody, over loopback. The 429's
// body is closed, and its connection used again.
func TestRetryPolicyReplaysPostBody(t *testing.T) {
	checkGoroutines(t)
	s := newScript(reply{429, ""}, reply{200, ""})
	srv := newServer(t, s)
	client, _, bt := newClient(t, retrying())
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("got %d, want 200", resp.StatusCode)
	}
	if got := s.bodies(); !reflect.DeepEqual(got, []string{"payload", "payload"}) {
		t.Errorf("the server got bodies %q, want %q twice", got, "payload")
	}
	if n := s.connections(); n != 1 {
		t.Errorf("the attempts came on %d connections, want 1", n)
	}
	bt.check(t, 2)
}

// The response of an attempt that is retried is closed before the retry
// is sent, not when the request ends, so that its connection is free for
// the retry.
func TestRetryPolicyClosesBeforeRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var closed atomic.Int32
		var atRetry []int32
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			atRetry = append(atRetry, closed.Load())
			return textResponse(req, 503, "busy", &closed), nil
		})
		client := &http.Client{Transport: towerhttp.NewTransport(base, retrying(backoff()))}
		resp, err := client.Get("http://fake/")
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{0, 1, 2}; !reflect.DeepEqual(atRetry, want) {
			t.Errorf("got %v bodies closed as each attempt was sent, want %v", atRetry, want)
		}
		if resp.StatusCode != 503 || closed.Load() != 2 {
			t.Errorf("got %d with %d bodies closed, want the last 503, open, and 2 closed", resp.StatusCode, closed.Load())
		}
		resp.Body.Close()

		// Outside a Transport, too.
		closed.Store(0)
		atRetry = nil
		svc := retry.New(tower.ServiceFunc[*http.Request, *http.Response](func(_ context.Context, req *http.Request) (*http.Response, error) {
			return base(req)
		}), towerhttp.NewRetryPolicy())
		p, _ := svc.Ready(t.Context())
		p.Call(t.Context(), httptest.NewRequest(http.MethodGet, "/", nil))
		if want := []int32{0, 1, 2}; !reflect.DeepEqual(atRetry, want) {
			t.Errorf("without a Transport: got %v bodies closed as each attempt was sent, want %v", atRetry, want)
		}
	})
}

// What is retried: idempotent requests on 429, 502, 503 and 504; other
// requests on 429 only; nothing on other statuses.
func TestRetryPolicyStatuses(t *testing.T) {
	tests := []struct {
		method string
		header string // an idempotency key, if not ""
		code   int
		want   int // attempts
	}{
		{http.MethodGet, "", 503, 3},
		{http.MethodGet, "", 502, 3},
		{http.MethodGet, "", 504, 3},
		{http.MethodGet, "", 429, 3},
		{http.MethodGet, "", 500, 1},
		{http.MethodGet, "", 501, 1},
		{http.MethodGet, "", 404, 1},
		{http.MethodGet, "", 200, 1},
		{http.MethodHead, "", 503, 3},
		{http.MethodOptions, "", 503, 3},
		{http.MethodTrace, "", 503, 3},
		{http.MethodPut, "", 503, 3},
		{http.MethodDelete, "", 503, 3},
		{http.MethodPost, "", 503, 1},
		{http.MethodPost, "", 502, 1},
		{http.MethodPost, "", 504, 1},
		{http.MethodPost, "", 500, 1},
		{http.MethodPost, "", 429, 3},
		{http.MethodPatch, "", 503, 1},
		{http.MethodPost, "Idempotency-Key", 503, 3},
		{http.MethodPost, "X-Idempotency-Key", 503, 3},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.header+http.StatusText(tt.code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(reply{tt.code, ""})
				client, bt := memServer(t, s, retrying())
				req, _ := http.NewRequestWithContext(t.Context(), tt.method, "http://mem/", strings.NewReader("body"))
				if tt.header != "" {
					req.Header.Set(tt.header, "k1")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if n := len(s.attempts()); n != tt.want || resp.StatusCode != tt.code {
					t.Errorf("got %d after %d attempts, want %d after %d", resp.StatusCode, n, tt.code, tt.want)
				}
				bt.check(t, tt.want)
			})
		})
	}
}

// Idempotent is RFC 9110's list of idempotent methods, GET for a request
// without one, or a request with an idempotency key.
func TestIdempotent(t *testing.T) {
	for _, m := range []string{"", "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"} {
		if !towerhttp.Idempotent(&http.Request{Method: m}) {
			t.Errorf("%q: got false, want true", m)
		}
	}
	for _, m := range []string{"POST", "PATCH", "CONNECT", "get", "PROPFIND"} {
		if towerhttp.Idempotent(&http.Request{Method: m}) {
			t.Errorf("%q: got true, want false", m)
		}
	}
	for _, h := range []string{"Idempotency-Key", "X-Idempotency-Key"} {
		// net/http's Transport counts the key even with no value.
		if !towerhttp.Idempotent(&http.Request{Method: "POST", Header: http.Header{h: nil}}) {
			t.Errorf("POST with %s: got false, want true", h)
		}
	}
}

// A dial error (a closed port on loopback) is retried, whatever the
// method: nothing was sent. The caller gets the last dial error.
func TestRetryPolicyDialError(t *testing.T) {
	checkGoroutines(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/"
	l.Close()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		base := &countingBase{base: &http.Transport{}}
		client := &http.Client{Transport: towerhttp.NewTransport(base, retrying())}
		req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader("body"))
		_, err := client.Do(req)
		if op, ok := errors.AsType[*net.OpError](err); !ok || op.Op != "dial" {
			t.Errorf("%s: got %v, want a dial error", method, err)
		}
		if n := base.n.Load(); n != 3 {
			t.Errorf("%s: got %d attempts, want 3", method, n)
		}
	}
}

// A certificate the client does not trust is not retried: the retry would
// meet it again.
func TestRetryPolicyUntrustedCertificate(t *testing.T) {
	checkGoroutines(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = discardLog
	srv.StartTLS()
	t.Cleanup(srv.Close)
	base := &countingBase{base: &http.Transport{}}
	client := &http.Client{Transport: towerhttp.NewTransport(base, retrying())}
	_, err := client.Get(srv.URL)
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); !ok {
		t.Errorf("got %v, want a *tls.CertificateVerificationError", err)
	}
	if n := base.n.Load(); n != 1 {
		t.Errorf("got %d attempts, want 1", n)
	}
}

// Errors of the base: an idempotent request is retried after any but a
// cancellation; another only after a dial error.
func TestRetryPolicyErrors(t *testing.T) {
	tests := []struct {
		name   string
		method string
		err    error
		want   int
	}{
		{"GET, reset", http.MethodGet, io.ErrUnexpectedEOF, 3},
		{"GET, canceled", http.MethodGet, context.Canceled, 1},
		{"POST, reset", http.MethodPost, io.ErrUnexpectedEOF, 1},
		{"POST, read error", http.MethodPost, &net.OpError{Op: "read", Err: errTest}, 1},
		{"POST, dial error", http.MethodPost, &net.OpError{Op: "dial", Err: errTest}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				base := fakeBase(func(req *http.Request) (*http.Response, error) {
					n++
					return nil, tt.err
				})
				client := &http.Client{Transport: towerhttp.NewTransport(base, retrying())}
				req, _ := http.NewRequestWithContext(t.Context(), tt.method, "http://fake/", nil)
				if _, err := client.Do(req); !errors.Is(err, tt.err) {
					t.Errorf("got %v, want %v", err, tt.err)
				}
				if n != tt.want {
					t.Errorf("got %d attempts, want %d", n, tt.want)
				}
			})
		})
	}
}

// A POST that a LoadShed below the Retry sheds never left: it is retried,
// after the backoff, and goes through once the limit has room.
func TestRetryPolicyLocalRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate("held")
		stack := towerhttp.ClientStack().
			RetryPolicy(towerhttp.NewRetryPolicy(backoff())).
			LoadShed().
			ConcurrencyLimit(1)
		client, _ := memServer(t, g, stack)
		go do(t, client, http.MethodGet, "")
		<-g.arrived
		done := make(chan error, 1)
		go func() {
			_, _, err := do(t, client, http.MethodPost, "payload")
			done <- err
		}()
		time.Sleep(60 * time.Millisecond) // the POST was shed at 0 and 50ms
		close(g.release)
		<-g.arrived // its third attempt, at 150ms
		if err := <-done; err != nil {
			t.Errorf("got %v, want nil", err)
		}
		if n := g.served.Load(); n != 2 {
			t.Errorf("the server served %d requests, want 2", n)
		}

		// With one attempt only, the caller gets the LoadShed's error.
		g2 := newGate("held")
		client, _ = memServer(t, g2, towerhttp.ClientStack().
			RetryPolicy(towerhttp.NewRetryPolicy(retry.WithMaxAttempts(1))).
			LoadShed().ConcurrencyLimit(1))
		go do(t, client, http.MethodGet, "")
		<-g2.arrived
		if _, _, err := do(t, client, http.MethodPost, "payload"); !errors.Is(err, loadshed.ErrOverloaded) {
			t.Errorf("got %v, want loadshed.ErrOverloaded", err)
		}
		close(g2.release)
	})
}

// A body that cannot be made again (no GetBody) is not retried: the caller
// gets a *ReplayError that says why and how to fix it, the response is
// closed, and the server got one attempt. One that needs no retry goes
// through.
func TestRetryPolicyBodyNotReplayable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(reply{429, ""})
		client, bt := memServer(t, s, retrying())
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://mem/", io.MultiReader(strings.NewReader("stream")))
		_, err := client.Do(req)
		re, ok := errors.AsType[*towerhttp.ReplayError](err)
		if !ok {
			t.Fatalf("got %v, want a *towerhttp.ReplayError", err)
		}
		if re.Method != "POST" || re.StatusCode != 429 || re.Err != nil {
			t.Errorf("got %+v, want POST, 429, no error", *re)
		}
		const want = "towerhttp: cannot retry POST request after 429 Too Many Requests: its body cannot be replayed (Request.GetBody is nil); set GetBody, or make the request with http.NewRequest over a bytes.Reader, strings.Reader or bytes.Buffer"
		if re.Error() != want {
			t.Errorf("got message %q, want %q", re.Error(), want)
		}
		if n := len(s.attempts()); n != 1 {
			t.Errorf("got %d attempts, want 1", n)
		}
		bt.check(t, 1)

		s200 := newScript(reply{200, ""})
		client, _ = memServer(t, s200, retrying())
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, "http://mem/", io.MultiReader(strings.NewReader("stream")))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := s200.bodies(); !reflect.DeepEqual(got, []string{"stream"}) {
			t.Errorf("the server got %q, want %q", got, "stream")
		}
	})
}

// A ReplayError of an attempt that failed says so, and wraps its error.
func TestReplayErrorOfError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dial := &net.OpError{Op: "dial", Net: "tcp", Err: errTest}
		base := fakeBase(func(req *http.Request) (*http.Response, error) { return nil, dial })
		client := &http.Client{Transport: towerhttp.NewTransport(base, retrying())}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://fake/", io.MultiReader(strings.NewReader("x")))
		_, err := client.Do(req)
		re, ok := errors.AsType[*towerhttp.ReplayError](err)
		if !ok || !errors.Is(err, errTest) || re.StatusCode != 0 {
			t.Fatalf("got %v, want a *towerhttp.ReplayError that wraps %v", err, errTest)
		}
		if want := "towerhttp: cannot retry PUT request after dial tcp: test error: its body"; !strings.HasPrefix(re.Error(), want) {
			t.Errorf("got %q, want it to start with %q", re.Error(), want)
		}
	})
}

// A budget is shared by the requests of every method.
func TestRetryPolicyBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(reply{429, ""})
		// No retry allowed beyond the minimum per second, here none.
		budget := retry.NewTPSBudget(10*time.Second, 0, 0.5)
		client, _ := memServer(t, s, retrying(retry.WithBudget(budget)))
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			if code, _, err := do(t, client, m, "x"); code != 429 {
				t.Fatalf("%s: got %d %v, want 429", m, code, err)
			}
		}
		// Two requests deposit 0.5 each: one retry.
		if n := len(s.attempts()); n != 3 {
			t.Errorf("got %d attempts, want 3", n)
		}
	})
}

// Bad input panics, naming the parameter.
func TestRetryPolicyBadInput(t *testing.T) {
	towertest.Panics(t, "towerhttp.WithMaxRetryAfter: max must be positive, got 0s", func() { towerhttp.WithMaxRetryAfter(0) })
	towertest.Panics(t, "towerhttp.WithMaxRetryAfter: max must be positive, got -1s", func() { towerhttp.WithMaxRetryAfter(-time.Second) })
	towertest.Panics(t, "towerhttp.NewRetryPolicy: option 1 is nil", func() { towerhttp.NewRetryPolicy(backoff(), nil) })
}

// Failure: errors but the caller's cancellation and local refusals for
// overload; 5xx but 501 and 505.
func TestFailure(t *testing.T) {
	errs := []struct {
		err  error
		want bool
	}{
		{errTest, true},
		{&net.OpError{Op: "dial", Err: errTest}, true},
		{context.DeadlineExceeded, true},
		{towerhttp.ErrTooManyHosts, true},
		{&towerhttp.ReadyError{Err: errTest}, true}, // unavailable
		{context.Canceled, false},
		{loadshed.ErrOverloaded, false},
		{throttled{}, false},
	}
	for _, tt := range errs {
		if got := towerhttp.Failure(nil, tt.err); got != tt.want {
			t.Errorf("Failure(nil, %v): got %v, want %v", tt.err, got, tt.want)
		}
	}
	for code, want := range map[int]bool{200: false, 404: false, 429: false, 499: false, 500: true, 501: false, 502: true, 503: true, 504: true, 505: false, 511: true} {
		if got := towerhttp.Failure(&http.Response{StatusCode: code}, nil); got != want {
			t.Errorf("Failure(%d): got %v, want %v", code, got, want)
		}
	}
}

// Accepted: not for 429, 503 and local refusals.
func TestAccepted(t *testing.T) {
	errs := []struct {
		err  error
		want bool
	}{
		{errTest, true},
		{context.DeadlineExceeded, true},
		{&net.OpError{Op: "dial", Err: errTest}, true},
		{loadshed.ErrOverloaded, false},
		{throttled{}, false},
		{&towerhttp.ReadyError{Err: errTest}, false},
	}
	for _, tt := range errs {
		if got := towerhttp.Accepted(nil, tt.err); got != tt.want {
			t.Errorf("Accepted(nil, %v): got %v, want %v", tt.err, got, tt.want)
		}
	}
	for code, want := range map[int]bool{200: true, 404: true, 429: false, 500: true, 502: true, 503: false, 504: true} {
		if got := towerhttp.Accepted(&http.Response{StatusCode: code}, nil); got != want {
			t.Errorf("Accepted(%d): got %v, want %v", code, got, want)
		}
	}
}

// A request answered at once, through a Retry with the policy, allocates
// nothing of the policy's: no copy of a request without a body.
func TestRetryPolicyAllocs(t *testing.T) {
	resp := &http.Response{StatusCode: 200}
	svc := retry.New(tower.ServiceFunc[*http.Request, *http.Response](func(context.Context, *http.Request) (*http.Response, error) {
		return resp, nil
	}), towerhttp.NewRetryPolicy())
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() {
		p, _ := svc.Ready(ctx)
		p.Call(ctx, req)
	}); n != 0 {
		t.Errorf("got %v allocations, want 0", n)
	}
}

func BenchmarkRetryPolicy(b *testing.B) {
	resp := &http.Response{StatusCode: 200}
	svc := retry.New(tower.ServiceFunc[*http.Request, *http.Response](func(context.Context, *http.Request) (*http.Response, error) {
		return resp, nil
	}), towerhttp.NewRetryPolicy())
	for _, tt := range []struct {
		name string
		body io.Reader
	}{{"GET", nil}, {"POST with body", strings.NewReader("payload")}} {
		b.Run(tt.name, func(b *testing.B) {
			req, _ := http.NewRequest(http.MethodPost, "http://host/", tt.body) // GetBody for a body
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				p, _ := svc.Ready(ctx)
				p.Call(ctx, req)
			}
		})
	}
	_ = limit.NewSemaphore
}
