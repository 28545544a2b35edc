package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// testService is a grpc-go server of grpc-go's interop TestService, as
// its interop tests expect it: it echoes the status asked for, the
// metadata sent ("x-grpc-test-echo-initial" as a header, and
// "x-grpc-test-echo-trailing-bin" as a trailer), and sends the payloads
// of the sizes asked for.
type testService struct {
	testgrpc.UnimplementedTestServiceServer
	calls    atomic.Int64
	deadline chan time.Duration // the time left of each call's deadline, or -1 without one
	gone     chan struct{}      // a call's context ended early
	next     chan struct{}      // StreamingOutputCall sends each response after the first once it gets one
}

func newTestService() *testService {
	return &testService{deadline: make(chan time.Duration, 100), gone: make(chan struct{}, 100), next: make(chan struct{})}
}

func payload(n int32) *testgrpc.Payload { return &testgrpc.Payload{Body: make([]byte, n)} }

// echoMetadata sends back the interop tests' metadata, as header and
// trailer, and the time left of ctx's deadline.
func (s *testService) echoMetadata(ctx context.Context, header func(metadata.MD) error, trailer func(metadata.MD)) {
	s.calls.Add(1)
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	select {
	case s.deadline <- left:
	default:
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md["x-grpc-test-echo-initial"]; len(v) > 0 {
		header(metadata.Pairs("x-grpc-test-echo-initial", v[0]))
	}
	if v := md["x-grpc-test-echo-trailing-bin"]; len(v) > 0 {
		trailer(metadata.Pairs("x-grpc-test-echo-trailing-bin", v[0]))
	}
}

func echoStatus(st *testgrpc.EchoStatus) error {
	if st == nil || st.Code == 0 {
		return nil
	}
	return grpcstatus.Error(codes.Code(st.Code), st.Message)
}

func (s *testService) EmptyCall(ctx context.Context, _ *testgrpc.Empty) (*testgrpc.Empty, error) {
	s.calls.Add(1)
	return &testgrpc.Empty{}, nil
}

func (s *testService) UnaryCall(ctx context.Context, in *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	s.echoMetadata(ctx, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) }, func(md metadata.MD) { grpc.SetTrailer(ctx, md) })
	if err := echoStatus(in.ResponseStatus); err != nil {
		return nil, err
	}
	if string(in.GetPayload().GetBody()) == "sleep" {
		select {
		case <-ctx.Done():
			s.gone <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
		}
	}
	return &testgrpc.SimpleResponse{Payload: payload(in.ResponseSize)}, nil
}

func (s *testService) StreamingOutputCall(in *testgrpc.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
	s.calls.Add(1)
	for i, p := range in.ResponseParameters {
		if i > 0 {
			select {
			case <-s.next:
			case <-stream.Context().Done():
				return stream.Context().Err()
			case <-time.After(10 * time.Second):
				return grpcstatus.Error(codes.Internal, "the client did not take the previous response within 10s")
			}
		}
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: payload(p.Size)}); err != nil {
			return err
		}
	}
	return nil
}

func (s *testService) StreamingInputCall(stream grpc.ClientStreamingServer[testgrpc.StreamingInputCallRequest, testgrpc.StreamingInputCallResponse]) error {
	s.calls.Add(1)
	var sum int32
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return stream.SendAndClose(&testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: sum})
		}
		if err != nil {
			return err
		}
		sum += int32(len(in.GetPayload().GetBody()))
	}
}

func (s *testService) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	ctx := stream.Context()
	s.echoMetadata(ctx, stream.SendHeader, stream.SetTrailer)
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := echoStatus(in.ResponseStatus); err != nil {
			return err
		}
		for _, p := range in.ResponseParameters {
			if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: payload(p.Size)}); err != nil {
				return err
			}
		}
	}
}

// grpcBackend serves s with grpc-go on loopback, h2c, and returns its URL.
func grpcBackend(t *testing.T, s *testService) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(srv, s)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return "http://" + ln.Addr().String()
}

// grpcThroughProxy starts a proxy in front of a grpc-go server of a new
// testService, with h2c to it, and returns the service and clients to
// the proxy over h2c and over TLS.
func grpcThroughProxy(t *testing.T) (*testService, map[string]*grpc.ClientConn) {
	svc := newTestService()
	backend := grpcBackend(t, svc)
	cert, key, pool := writeCert(t)
	h2c := startProxy(t, config([]string{backend}, "h2c: true", "protocol: h2c"))
	tls := startProxy(t, config([]string{backend}, fmt.Sprintf("tls: {cert: %s, key: %s}", cert, key), "protocol: h2c"))
	conns := map[string]*grpc.ClientConn{}
	for name, c := range map[string]struct {
		addr  string
		creds credentials.TransportCredentials
	}{
		"h2c": {h2c.Addr, insecure.NewCredentials()},
		"tls": {tls.Addr, credentials.NewTLS(tlsConfig(pool))},
	} {
		cc, err := grpc.NewClient("passthrough:///"+c.addr, grpc.WithTransportCredentials(c.creds))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		conns[name] = cc
	}
	return svc, conns
}

// A real grpc-go client, through the proxy over h2c and over TLS, to a
// real grpc-go server: the four kinds of call, metadata, status codes and
// messages, trailers, deadlines, as grpc-go's interop tests check them.
func TestGRPCThroughProxy(t *testing.T) {
	svc, conns := grpcThroughProxy(t)
	for name, cc := range conns {
		tc := testgrpc.NewTestServiceClient(cc)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		t.Run(name+"/empty unary", func(t *testing.T) {
			if _, err := tc.EmptyCall(ctx, &testgrpc.Empty{}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(name+"/large unary", func(t *testing.T) {
			res, err := tc.UnaryCall(ctx, &testgrpc.SimpleRequest{ResponseSize: 314159, Payload: payload(271828)})
			if err != nil || len(res.GetPayload().GetBody()) != 314159 {
				t.Fatalf("got %d bytes, %v; want 314159", len(res.GetPayload().GetBody()), err)
			}
		})
		t.Run(name+"/client streaming", func(t *testing.T) {
			stream, err := tc.StreamingInputCall(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int32{27182, 8, 1828, 45904} {
				if err := stream.Send(&testgrpc.StreamingInputCallRequest{Payload: payload(n)}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := stream.CloseAndRecv()
			if err != nil || res.AggregatedPayloadSize != 74922 {
				t.Fatalf("got %d, %v; want 74922", res.GetAggregatedPayloadSize(), err)
			}
		})
		t.Run(name+"/server streaming, each response as sent", func(t *testing.T) {
			sizes := []int32{31415, 9, 2653, 58979}
			var params []*testgrpc.ResponseParameters
			for _, n := range sizes {
				params = append(params, &testgrpc.ResponseParameters{Size: n})
			}
			stream, err := tc.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{ResponseParameters: params})
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range sizes {
				res, err := stream.Recv()
				if err != nil || int32(len(res.GetPayload().GetBody())) != n {
					t.Fatalf("response %d: got %d bytes, %v; want %d", i, len(res.GetPayload().GetBody()), err, n)
				}
				if i < len(sizes)-1 {
					svc.next <- struct{}{} // the server sends the next one only now
				}
			}
			if _, err := stream.Recv(); err != io.EOF {
				t.Fatalf("got %v after the last response, want io.EOF", err)
			}
		})
		t.Run(name+"/ping-pong", func(t *testing.T) {
			stream, err := tc.FullDuplexCall(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range []int32{31415, 9, 2653, 58979} {
				req := &testgrpc.StreamingOutputCallRequest{ResponseParameters: []*testgrpc.ResponseParameters{{Size: n}}, Payload: payload(n / 2)}
				if err := stream.Send(req); err != nil {
					t.Fatal(err)
				}
				res, err := stream.Recv()
				if err != nil || int32(len(res.GetPayload().GetBody())) != n {
					t.Fatalf("pong %d: got %d bytes, %v; want %d", i, len(res.GetPayload().GetBody()), err, n)
				}
			}
			stream.CloseSend()
			if _, err := stream.Recv(); err != io.EOF {
				t.Fatalf("got %v at the end, want io.EOF", err)
			}
		})
		t.Run(name+"/empty stream", func(t *testing.T) {
			stream, err := tc.FullDuplexCall(ctx)
			if err != nil {
				t.Fatal(err)
			}
			stream.CloseSend()
			if _, err := stream.Recv(); err != io.EOF {
				t.Fatalf("got %v, want io.EOF", err)
			}
		})
		t.Run(name+"/custom metadata", func(t *testing.T) {
			md := metadata.Pairs("x-grpc-test-echo-initial", "test_initial_metadata_value",
				"x-grpc-test-echo-trailing-bin", string([]byte{0xab, 0xab, 0xab}))
			mctx := metadata.NewOutgoingContext(ctx, md)
			var header, trailer metadata.MD
			if _, err := tc.UnaryCall(mctx, &testgrpc.SimpleRequest{ResponseSize: 1}, grpc.Header(&header), grpc.Trailer(&trailer)); err != nil {
				t.Fatal(err)
			}
			checkEchoed(t, "unary", header, trailer)
			stream, err := tc.FullDuplexCall(mctx)
			if err != nil {
				t.Fatal(err)
			}
			stream.Send(&testgrpc.StreamingOutputCallRequest{ResponseParameters: []*testgrpc.ResponseParameters{{Size: 1}}})
			if _, err := stream.Recv(); err != nil {
				t.Fatal(err)
			}
			stream.CloseSend()
			if _, err := stream.Recv(); err != io.EOF {
				t.Fatal(err)
			}
			header, _ = stream.Header()
			checkEchoed(t, "full duplex", header, stream.Trailer())
		})
		t.Run(name+"/status code and message", func(t *testing.T) {
			for _, msg := range []string{"test status message", "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"} {
				st := &testgrpc.EchoStatus{Code: 2, Message: msg}
				_, err := tc.UnaryCall(ctx, &testgrpc.SimpleRequest{ResponseStatus: st})
				if s := grpcstatus.Convert(err); s.Code() != codes.Unknown || s.Message() != msg {
					t.Errorf("unary: got %v %q, want Unknown %q", s.Code(), s.Message(), msg)
				}
				stream, err := tc.FullDuplexCall(ctx)
				if err != nil {
					t.Fatal(err)
				}
				stream.Send(&testgrpc.StreamingOutputCallRequest{ResponseStatus: st})
				stream.CloseSend()
				_, err = stream.Recv()
				if s := grpcstatus.Convert(err); s.Code() != codes.Unknown || s.Message() != msg {
					t.Errorf("full duplex: got %v %q, want Unknown %q", s.Code(), s.Message(), msg)
				}
			}
		})
		t.Run(name+"/unimplemented method", func(t *testing.T) {
			err := cc.Invoke(ctx, "/grpc.testing.TestService/UnimplementedCall", &testgrpc.Empty{}, &testgrpc.Empty{})
			if grpcstatus.Code(err) != codes.Unimplemented {
				t.Errorf("got %v, want Unimplemented", err)
			}
		})
		t.Run(name+"/deadline propagated", func(t *testing.T) {
			for len(svc.deadline) > 0 {
				<-svc.deadline
			}
			dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
			defer dcancel()
			if _, err := tc.UnaryCall(dctx, &testgrpc.SimpleRequest{}); err != nil {
				t.Fatal(err)
			}
			if left := <-svc.deadline; left <= 3*time.Second || left > 5*time.Second {
				t.Errorf("the server's call had %v left of its deadline, want the client's 5s, less the trip", left)
			}
		})
		t.Run(name+"/timeout on sleeping server", func(t *testing.T) {
			dctx, dcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer dcancel()
			_, err := tc.UnaryCall(dctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("sleep")}})
			if grpcstatus.Code(err) != codes.DeadlineExceeded {
				t.Errorf("got %v, want DeadlineExceeded", err)
			}
			select {
			case <-svc.gone:
			case <-time.After(5 * time.Second):
				t.Errorf("the server's call did not end within 5s of the client's deadline")
			}
		})
	}
}

func checkEchoed(t *testing.T, call string, header, trailer metadata.MD) {
	t.Helper()
	if v := header.Get("x-grpc-test-echo-initial"); len(v) != 1 || v[0] != "test_initial_metadata_value" {
		t.Errorf("%s: got header %v, want the initial metadata echoed", call, header)
	}
	if v := trailer.Get("x-grpc-test-echo-trailing-bin"); len(v) != 1 || v[0] != string([]byte{0xab, 0xab, 0xab}) {
		t.Errorf("%s: got trailer %v, want the trailing metadata echoed", call, trailer)
	}
}

// A gRPC error is an answer, not a failure of the proxy's to retry: the
// server gets a call that fails UNAVAILABLE once, and the client the
// status; and a backend that is down is the proxy's UNAVAILABLE.
func TestGRPCErrorsNotRetried(t *testing.T) {
	svc, conns := grpcThroughProxy(t)
	tc := testgrpc.NewTestServiceClient(conns["h2c"])
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	before := svc.calls.Load()
	_, err := tc.UnaryCall(ctx, &testgrpc.SimpleRequest{ResponseStatus: &testgrpc.EchoStatus{Code: int32(codes.Unavailable), Message: "try elsewhere"}})
	if s := grpcstatus.Convert(err); s.Code() != codes.Unavailable || s.Message() != "try elsewhere" {
		t.Errorf("got %v, want the server's Unavailable", err)
	}
	if n := svc.calls.Load() - before; n != 1 {
		t.Errorf("the server got %d calls, want 1: the proxy does not retry a gRPC error", n)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	p := startProxy(t, config([]string{dead}, "h2c: true", "protocol: h2c"))
	cc, err := grpc.NewClient("passthrough:///"+p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	_, err = testgrpc.NewTestServiceClient(cc).EmptyCall(ctx, &testgrpc.Empty{})
	if s := grpcstatus.Convert(err); s.Code() != codes.Unavailable || s.Message() != "bad gateway" {
		t.Errorf("a backend down: got %v, want the proxy's Unavailable, bad gateway", err)
	}
}

// A gRPC call the proxy got no response for is answered with a gRPC
// status, not an HTTP error that a gRPC client could only map to
// UNAVAILABLE: DEADLINE_EXCEEDED once the call's grpc-timeout has passed
// (a backend that ends the call at its deadline does so a moment before
// the client does, and the proxy's answer may reach the client first),
// UNAVAILABLE for a backend that broke the call off.
func TestGRPCFailureIsAGRPCStatus(t *testing.T) {
	backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Grpc-Timeout") == "50m" {
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
			}
		}
		panic(http.ErrAbortHandler) // a stream reset, before any response
	}), func(s *http.Server) {
		s.Protocols = new(http.Protocols)
		s.Protocols.SetUnencryptedHTTP2(true)
	})
	p := startProxy(t, config([]string{backend.URL}, "h2c: true", "protocol: h2c"))
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: waitFor}
	for _, tc := range []struct {
		timeout, status, message string
	}{
		{"50m", "4", "upstream timed out"},
		{"", "14", "bad gateway"},
	} {
		req := mustRequest(t, "POST", p.URL("/grpc.testing.TestService/UnaryCall"), strings.NewReader("\x00\x00\x00\x00\x00"))
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		if tc.timeout != "" {
			req.Header.Set("Grpc-Timeout", tc.timeout)
		}
		res, body := do(t, c, req)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/grpc" ||
			res.Header.Get("Grpc-Status") != tc.status || res.Header.Get("Grpc-Message") != tc.message || body != "" {
			t.Errorf("grpc-timeout %q: got %d %v %q, want a Trailers-Only 200 with grpc-status %s, %q", tc.timeout, res.StatusCode, res.Header, body, tc.status, tc.message)
		}
	}

	// And a grpc-go client reads the second as UNAVAILABLE, with the message.
	cc, err := grpc.NewClient("passthrough:///"+p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	_, err = testgrpc.NewTestServiceClient(cc).UnaryCall(ctx, &testgrpc.SimpleRequest{})
	if s := grpcstatus.Convert(err); s.Code() != codes.Unavailable || s.Message() != "bad gateway" {
		t.Errorf("grpc-go: got %v %q, want Unavailable %q", s.Code(), s.Message(), "bad gateway")
	}
}
