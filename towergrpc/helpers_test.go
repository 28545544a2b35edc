package towergrpc_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// The tests serve grpc's health service, which grpc ships with its
// generated code, so that no protos need generating here: Check is a unary
// RPC and Watch a server stream. Each test gives the methods its own body.
type healthServer struct {
	healthpb.UnimplementedHealthServer
	check func(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error)
	watch func(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error
}

func (h *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return h.check(ctx, req)
}

func (h *healthServer) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	return h.watch(req, stream)
}

var serving = &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}

// serve starts a grpc server with sopts, serving h over an in-memory
// listener, and returns a client for it made with dopts. Both are stopped
// when the test ends, and the test waits for the server to stop.
func serve(t *testing.T, h *healthServer, sopts []grpc.ServerOption, dopts ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer(sopts...)
	healthpb.RegisterHealthServer(srv, h)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	dopts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, dopts...)
	conn, err := grpc.NewClient("passthrough:///bufconn", dopts...)
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		// ErrServerStopped: Stop came first, on a machine too busy to
		// have started Serve before a test that never reached it ended.
		if err := <-served; err != nil && err != grpc.ErrServerStopped {
			t.Errorf("Serve returned %v, want nil", err)
		}
	})
	return healthpb.NewHealthClient(conn)
}

// A gate holds the handlers that pass it until the test opens it, and
// tells the test which requests reached it.
type gate struct {
	entered chan string   // the Service field of each request that arrived
	open    chan struct{} // closed to let every handler through
}

func newGate() *gate { return &gate{entered: make(chan string, 16), open: make(chan struct{})} }

// check is a Check body that waits at the gate, or until ctx ends.
func (g *gate) check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	g.entered <- req.Service
	select {
	case <-g.open:
		return serving, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// watch is a Watch body that sends SERVING, then waits at the gate or until
// the stream's context ends.
func (g *gate) watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	if err := stream.Send(serving); err != nil {
		return err
	}
	g.entered <- req.Service
	select {
	case <-g.open:
		return nil
	case <-stream.Context().Done():
		return stream.Context().Err()
	}
}

// returns is a unary server interceptor to chain outside the one under
// test: it reports each error the inner interceptors returned, once they
// have returned, so that a test knows a call is over on the server.
func returns(errs chan<- error) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		res, err := handler(ctx, req)
		errs <- err
		return res, err
	}
}

// streamReturns is returns for streams.
func streamReturns(errs chan<- error) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		err := handler(srv, ss)
		errs <- err
		return err
	}
}

// checkStatus fails the test unless err is a status error with code c and
// message msg.
func checkStatus(t *testing.T, err error, c codes.Code, msg string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("got error %v (%T), want a status error", err, err)
	}
	if st.Code() != c || st.Message() != msg {
		t.Fatalf("got status %v %q, want %v %q", st.Code(), st.Message(), c, msg)
	}
}

// check calls Check for service and fails the test unless it answers
// SERVING.
func check(t *testing.T, client healthpb.HealthClient, service string) {
	t.Helper()
	rsp, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("Check(%q): got error %v, want SERVING", service, err)
	}
	if rsp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check(%q): got %v, want SERVING", service, rsp.Status)
	}
}

// errTest is an error the tests' handlers and layers return.
var errTest = errors.New("test error")
