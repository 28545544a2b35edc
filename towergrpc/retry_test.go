package towergrpc_test

import (
	"context"
	"net"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
	"github.com/towergo/tower/towertest"
)

// retryingClient returns the interceptor of a client stack with policy.
func retryingClient(policy *towergrpc.RetryPolicy) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(towergrpc.UnaryClientInterceptor(
		towergrpc.UnaryClientStack().RetryPolicy(policy)))
}

// attempts is a Check body that answers the errors given in turn, then
// SERVING, and counts the calls.
type attempts struct {
	mu   sync.Mutex
	errs []error
	n    int
}

func (a *attempts) check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	if a.n <= len(a.errs) {
		return nil, a.errs[a.n-1]
	}
	return serving, nil
}

func (a *attempts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

var errUnavailable = status.Error(codes.Unavailable, "going away")

// The third failure, fixed: with the ready-made policy, a real
// server's UNAVAILABLE is retried, for a method said to be idempotent.
// Without, the call may have been acted on: it is not.
func TestRetryPolicyUnavailable(t *testing.T) {
	all := func(string) bool { return true }
	a := &attempts{errs: []error{errUnavailable}}
	client := serve(t, &healthServer{check: a.check}, nil, retryingClient(towergrpc.NewRetryPolicy().WithIdempotent(all)))
	check(t, client, "")
	if n := a.count(); n != 2 {
		t.Errorf("got %d attempts, want 2", n)
	}

	a = &attempts{errs: []error{errUnavailable}}
	client = serve(t, &healthServer{check: a.check}, nil, retryingClient(towergrpc.NewRetryPolicy()))
	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	checkStatus(t, err, codes.Unavailable, "going away")
	if n := a.count(); n != 1 {
		t.Errorf("not idempotent: got %d attempts, want 1", n)
	}

	// WithIdempotent leaves the policy it is called on as it was.
	none := towergrpc.NewRetryPolicy()
	none.WithIdempotent(all)
	a = &attempts{errs: []error{errUnavailable}}
	client = serve(t, &healthServer{check: a.check}, nil, retryingClient(none))
	client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	if n := a.count(); n != 1 {
		t.Errorf("the original policy: got %d attempts, want 1", n)
	}
}

// A call to a server that is not there (a closed port on loopback) fails
// UNAVAILABLE before grpc opens a stream: nothing was sent, and it is
// retried, idempotent or not.
func TestRetryPolicyNothingSent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	n := 0
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		n++
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(towergrpc.UnaryClientInterceptor(
			towergrpc.UnaryClientStack().RetryPolicy(towergrpc.NewRetryPolicy())), count))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	if c := status.Code(err); c != codes.Unavailable {
		t.Fatalf("got %v, want codes.Unavailable", err)
	}
	if n != 3 {
		t.Errorf("got %d attempts, want 3", n)
	}
}

// A server of this package sends a pushback with each call it sheds:
// DefaultPushback, or what WithPushback or WithNoRetry say; none with
// WithPushback(0), and none with a call its handler ran.
func TestServerSendsPushback(t *testing.T) {
	tests := []struct {
		name string
		opts []towergrpc.ServerOption
		want []string
	}{
		{"default", nil, []string{"1000"}},
		{"set", []towergrpc.ServerOption{towergrpc.WithPushback(1500*time.Microsecond + 20*time.Millisecond)}, []string{"22"}},
		{"none", []towergrpc.ServerOption{towergrpc.WithPushback(0)}, nil},
		{"no retry", []towergrpc.ServerOption{towergrpc.WithNoRetry()}, []string{"-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			protect := towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1)
			client := serve(t, &healthServer{check: g.check},
				[]grpc.ServerOption{grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(protect, tt.opts...))})
			done := make(chan error, 1)
			go func() {
				_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "held"})
				done <- err
			}()
			<-g.entered
			var trailer metadata.MD
			_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
			checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
			if got := trailer[towergrpc.PushbackKey]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("shed: got pushback %q, want %q", got, tt.want)
			}
			close(g.open)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			trailer = nil
			if _, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer)); err != nil {
				t.Fatal(err)
			}
			if got := trailer[towergrpc.PushbackKey]; got != nil {
				t.Errorf("served: got pushback %q, want none", got)
			}
		})
	}
}

// A call refused with an error that says when to try again (a per-key
// limit's, the time until the key's next token) is sent that as its
// pushback, in whole milliseconds rounded up, in place of the server's;
// WithNoRetry still asks for none, and WithPushback(0) sends none.
func TestServerPushbackOfError(t *testing.T) {
	tests := []struct {
		name string
		wait time.Duration
		opts []towergrpc.ServerOption
		want []string
	}{
		{"rounded up", 1500*time.Microsecond + 20*time.Millisecond, nil, []string{"22"}},
		{"says nothing", 0, []towergrpc.ServerOption{towergrpc.WithPushback(5 * time.Second)}, []string{"5000"}},
		{"no retry", time.Second, []towergrpc.ServerOption{towergrpc.WithNoRetry()}, []string{"-1"}},
		{"none", time.Second, []towergrpc.ServerOption{towergrpc.WithPushback(0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refuse := tower.LayerFunc[towergrpc.UnaryServerCall, any](func(tower.Service[towergrpc.UnaryServerCall, any]) tower.Service[towergrpc.UnaryServerCall, any] {
				return tower.ServiceFunc[towergrpc.UnaryServerCall, any](func(context.Context, towergrpc.UnaryServerCall) (any, error) {
					return nil, &limit.KeyLimitError{Wait: tt.wait}
				})
			})
			client := serve(t, &healthServer{}, []grpc.ServerOption{grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(refuse, tt.opts...))})
			var trailer metadata.MD
			_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("got %v, want ResourceExhausted", err)
			}
			if got := trailer[towergrpc.PushbackKey]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got pushback %q, want %q", got, tt.want)
			}
		})
	}
}

// A broken stack (an error from Ready) and an unavailable one send the
// pushback too, on unary calls and on streams; a timeout does not.
func TestServerPushbackUnavailable(t *testing.T) {
	broken := brokenLayer[unaryCall, any]()
	client := serve(t, &healthServer{check: func(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		return serving, nil
	}, watch: func(*healthpb.HealthCheckRequest, healthpb.Health_WatchServer) error { return nil }},
		[]grpc.ServerOption{
			grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(broken)),
			grpc.StreamInterceptor(towergrpc.StreamServerInterceptor(brokenLayer[streamCall, struct{}]())),
		})
	var trailer metadata.MD
	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	if status.Code(err) != codes.Unavailable || !reflect.DeepEqual(trailer[towergrpc.PushbackKey], []string{"1000"}) {
		t.Errorf("unary: got %v with pushback %q, want Unavailable with 1000", err, trailer[towergrpc.PushbackKey])
	}
	stream, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	if got := stream.Trailer()[towergrpc.PushbackKey]; status.Code(err) != codes.Unavailable || !reflect.DeepEqual(got, []string{"1000"}) {
		t.Errorf("stream: got %v with pushback %q, want Unavailable with 1000", err, got)
	}

	timing := towergrpc.UnaryServerStack().Timeout(time.Millisecond)
	client = serve(t, &healthServer{check: func(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}, []grpc.ServerOption{grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(timing))})
	trailer = nil
	_, err = client.Check(t.Context(), &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	if status.Code(err) != codes.DeadlineExceeded || trailer[towergrpc.PushbackKey] != nil {
		t.Errorf("timed out: got %v with pushback %q, want DeadlineExceeded with none", err, trailer[towergrpc.PushbackKey])
	}
}

// A stream the stack sheds gets the pushback as well.
func TestServerPushbackStreamShed(t *testing.T) {
	g := newGate()
	protect := towergrpc.StreamServerStack().LoadShed().ConcurrencyLimit(1)
	client := serve(t, &healthServer{watch: g.watch},
		[]grpc.ServerOption{grpc.StreamInterceptor(towergrpc.StreamServerInterceptor(protect, towergrpc.WithPushback(3*time.Second)))})
	first, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: "held"})
	if err != nil {
		t.Fatal(err)
	}
	first.Recv()
	<-g.entered
	second, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = second.Recv()
	if got := second.Trailer()[towergrpc.PushbackKey]; status.Code(err) != codes.ResourceExhausted || !reflect.DeepEqual(got, []string{"3000"}) {
		t.Errorf("got %v with pushback %q, want ResourceExhausted with 3000", err, got)
	}
	close(g.open)
}

// Our server's pushback is honoured by our client: a call shed with
// RESOURCE_EXHAUSTED, not idempotent, is retried after the pushback, once
// the server has room, and succeeds; with WithNoRetry it is not retried.
func TestPushbackHonoured(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opt      towergrpc.ServerOption
		wantCode codes.Code
	}{
		{"pushback", towergrpc.WithPushback(20 * time.Millisecond), codes.OK},
		{"no retry", towergrpc.WithNoRetry(), codes.ResourceExhausted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			errs := make(chan error, 8)
			protect := towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1)
			client := serve(t, &healthServer{check: g.check},
				[]grpc.ServerOption{grpc.ChainUnaryInterceptor(returns(errs), towergrpc.UnaryServerInterceptor(protect, tt.opt))},
				retryingClient(towergrpc.NewRetryPolicy()))
			go client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "held"})
			<-g.entered
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "second"})
				done <- err
			}()
			if err := <-errs; status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("the server returned %v, want ResourceExhausted", err)
			}
			close(g.open) // the retry, 20ms later, finds room
			err := <-done
			if c := status.Code(err); c != tt.wantCode {
				t.Fatalf("got %v, want %v", err, tt.wantCode)
			}
			if tt.wantCode == codes.OK {
				if d := time.Since(start); d < 20*time.Millisecond {
					t.Errorf("the retry came after %v, want at least the pushback, 20ms", d)
				}
				if got := <-g.entered; got != "second" {
					t.Errorf("the handler got %q, want the retry of %q", got, "second")
				}
			}
		})
	}
}

// invokerWith returns an invoker that fails each attempt with the error
// given in turn, with the trailer given in turn (none for nil: grpc
// opened no stream), then succeeds, and records when each attempt came.
func invokerWith(errs []error, trailers []metadata.MD, at *[]time.Duration) grpc.UnaryInvoker {
	start := time.Now()
	n := 0
	return func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
		*at = append(*at, time.Since(start))
		n++
		if n > len(errs) {
			return nil
		}
		if md := trailers[n-1]; md != nil {
			for _, o := range opts {
				if tr, ok := o.(grpc.TrailerCallOption); ok {
					*tr.TrailerAddr = md
				}
			}
		}
		return errs[n-1]
	}
}

func pushback(v ...string) metadata.MD { return metadata.MD{towergrpc.PushbackKey: v} }

var errExhausted = status.Error(codes.ResourceExhausted, "service overloaded")

// The pushback, as a retrying client reads it, in virtual time: waited
// for exactly, when it is a non-negative number within the cap; a retry
// refused otherwise; RESOURCE_EXHAUSTED retried only with one.
func TestRetryPolicyPushback(t *testing.T) {
	none := metadata.MD{}
	backoff := retry.WithBackoff(retry.NewExponentialBackoff(50*time.Millisecond, 100*time.Millisecond, 0))
	tests := []struct {
		name     string
		err      error
		trailer  metadata.MD
		opts     []retry.PolicyOption
		want     []time.Duration
		wantCode codes.Code
	}{
		{"exhausted, 1s", errExhausted, pushback("1000"), nil, []time.Duration{0, time.Second}, codes.OK},
		{"exhausted, 0", errExhausted, pushback("0"), []retry.PolicyOption{backoff}, []time.Duration{0, 50 * time.Millisecond}, codes.OK},
		{"exhausted, none", errExhausted, none, nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, -1", errExhausted, pushback("-1"), nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, garbage", errExhausted, pushback("soon"), nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, twice", errExhausted, pushback("1", "2"), nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, empty", errExhausted, metadata.MD{towergrpc.PushbackKey: {}}, nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, at the cap", errExhausted, pushback("10000"), nil, []time.Duration{0, 10 * time.Second}, codes.OK},
		{"exhausted, beyond the cap", errExhausted, pushback("10001"), nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, huge", errExhausted, pushback("9223372036854775807"), nil, []time.Duration{0}, codes.ResourceExhausted},
		{"exhausted, cap raised", errExhausted, pushback("11000"), []retry.PolicyOption{towergrpc.WithMaxPushback(11 * time.Second)}, []time.Duration{0, 11 * time.Second}, codes.OK},
		{"unavailable, 2s", errUnavailable, pushback("2000"), nil, []time.Duration{0, 2 * time.Second}, codes.OK},
		{"unavailable, -1", errUnavailable, pushback("-1"), nil, []time.Duration{0}, codes.Unavailable},
		{"unavailable, sent", errUnavailable, none, nil, []time.Duration{0}, codes.Unavailable},
		{"unavailable, not sent", errUnavailable, nil, []retry.PolicyOption{backoff}, []time.Duration{0, 50 * time.Millisecond}, codes.OK},
		{"internal", status.Error(codes.Internal, "bug"), pushback("1"), nil, []time.Duration{0}, codes.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				intercept := towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack().RetryPolicy(towergrpc.NewRetryPolicy(tt.opts...)))
				var at []time.Duration
				err := intercept(t.Context(), "/test.Service/Unary", "req", nil, nil, invokerWith([]error{tt.err}, []metadata.MD{tt.trailer}, &at))
				if c := status.Code(err); c != tt.wantCode {
					t.Errorf("got %v, want %v", err, tt.wantCode)
				}
				if !reflect.DeepEqual(at, tt.want) {
					t.Errorf("got attempts at %v, want %v", at, tt.want)
				}
			})
		})
	}
}

// The trailer read is the last attempt's: a pushback of the first attempt
// does not make the second's RESOURCE_EXHAUSTED without one retried.
func TestRetryPolicyPushbackPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		intercept := towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack().RetryPolicy(towergrpc.NewRetryPolicy()))
		var at []time.Duration
		inv := invokerWith([]error{errExhausted, errExhausted}, []metadata.MD{pushback("100"), nil}, &at)
		err := intercept(t.Context(), "/test.Service/Unary", "req", nil, nil, inv)
		checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
		if want := []time.Duration{0, 100 * time.Millisecond}; !reflect.DeepEqual(at, want) {
			t.Errorf("got attempts at %v, want %v", at, want)
		}
	})
}

// A call the stack below the Retry refuses never left: it is retried. A
// layer's own other errors (a Timeout's) are not.
func TestRetryPolicyLocalRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stack := towergrpc.UnaryClientStack().
			RetryPolicy(towergrpc.NewRetryPolicy(retry.WithBackoff(retry.NewExponentialBackoff(10*time.Millisecond, 10*time.Millisecond, 0)))).
			LoadShed().
			ConcurrencyLimit(1)
		intercept := towergrpc.UnaryClientInterceptor(stack)
		release := make(chan struct{})
		go intercept(t.Context(), "/test.Service/Unary", "first", nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			<-release
			return nil
		})
		synctest.Wait()
		var at []time.Duration
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			done <- intercept(t.Context(), "/test.Service/Unary", "second", nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				at = append(at, time.Since(start))
				return nil
			})
		}()
		time.Sleep(15 * time.Millisecond) // shed at 0 and 10ms
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("got %v, want nil", err)
		}
		if want := []time.Duration{20 * time.Millisecond}; !reflect.DeepEqual(at, want) {
			t.Errorf("got the call sent at %v, want %v", at, want)
		}

		intercept = towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack().
			RetryPolicy(towergrpc.NewRetryPolicy()).Timeout(time.Millisecond))
		n := 0
		err := intercept(t.Context(), "/test.Service/Unary", "req", nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			n++
			<-ctx.Done()
			return status.FromContextError(ctx.Err()).Err()
		})
		if status.Code(err) != codes.DeadlineExceeded || n != 1 {
			t.Errorf("timed out: got %v after %d attempts, want DeadlineExceeded after 1", err, n)
		}
	})
}

// Failure and Accepted, on statuses and on the errors of layers.
func TestClassifiers(t *testing.T) {
	tests := []struct {
		err               error
		failure, accepted bool
	}{
		{nil, false, true},
		{status.Error(codes.Unavailable, "x"), true, false},
		{status.Error(codes.DeadlineExceeded, "x"), true, true},
		{status.Error(codes.Internal, "x"), true, true},
		{status.Error(codes.Unknown, "x"), true, true},
		{status.Error(codes.DataLoss, "x"), true, true},
		{status.Error(codes.ResourceExhausted, "x"), false, false},
		{status.Error(codes.Canceled, "x"), false, true},
		{status.Error(codes.NotFound, "x"), false, true},
		{status.Error(codes.InvalidArgument, "x"), false, true},
		{status.Error(codes.Unimplemented, "x"), false, true},
		{loadshed.ErrOverloaded, false, false},
		{timeout.ErrElapsed, true, true},
		{context.Canceled, false, true},
		{context.DeadlineExceeded, true, true},
		{errTest, true, true},
	}
	for _, tt := range tests {
		if got := towergrpc.Failure(struct{}{}, tt.err); got != tt.failure {
			t.Errorf("Failure(%v): got %v, want %v", tt.err, got, tt.failure)
		}
		if got := towergrpc.Accepted(struct{}{}, tt.err); got != tt.accepted {
			t.Errorf("Accepted(%v): got %v, want %v", tt.err, got, tt.accepted)
		}
	}
}

// Bad input panics, naming the parameter.
func TestRetryPolicyBadInput(t *testing.T) {
	towertest.Panics(t, "towergrpc.WithPushback: d must not be negative, got -1ms", func() { towergrpc.WithPushback(-time.Millisecond) })
	towertest.Panics(t, "towergrpc.WithMaxPushback: max must be positive, got 0s", func() { towergrpc.WithMaxPushback(0) })
	towertest.Panics(t, "towergrpc.NewRetryPolicy: option 0 is nil", func() { towergrpc.NewRetryPolicy(nil) })
	towertest.Panics(t, "towergrpc.RetryPolicy.WithIdempotent: nil function", func() { towergrpc.NewRetryPolicy().WithIdempotent(nil) })
}

// A call that succeeds through the policy allocates only the trailer's
// collection; a server that sheds sends its pushback without allocating
// anything of its own when there is no grpc stream (a direct call).
func BenchmarkRetryPolicy(b *testing.B) {
	intercept := towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack().RetryPolicy(towergrpc.NewRetryPolicy()))
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = intercept(ctx, "/test.Service/Unary", "req", nil, nil, invoker)
	}
}
