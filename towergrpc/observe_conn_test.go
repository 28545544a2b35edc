package towergrpc_test

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc"
)

// Over a real connection, the server and the client report each RPC with
// the code the client really got: the server with the one it sent, the
// client with the one that arrived.
func TestMetricsOverConnection(t *testing.T) {
	const (
		checkMethod = "/grpc.health.v1.Health/Check"
		watchMethod = "/grpc.health.v1.Health/Watch"
	)
	var server, client recorder
	g := newGate()
	answer := make(chan error, 1) // what the next Check answers, once through the gate
	errs := make(chan error, 4)
	h := &healthServer{
		check: func(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
			if _, err := g.check(ctx, req); err != nil {
				return nil, err
			}
			return serving, <-answer
		},
		watch: g.watch,
	}
	c := serve(t, h,
		[]grpc.ServerOption{
			grpc.ChainUnaryInterceptor(returns(errs), towergrpc.UnaryServerInterceptor(
				towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1),
				towergrpc.WithServerMetrics(&server))),
			grpc.ChainStreamInterceptor(streamReturns(errs), towergrpc.StreamServerInterceptor(
				towergrpc.StreamServerStack(), towergrpc.WithServerMetrics(&server))),
		},
		grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack(), towergrpc.WithClientMetrics(&client))),
		grpc.WithStreamInterceptor(towergrpc.StreamClientInterceptor(towergrpc.StreamClientStack(), towergrpc.WithClientMetrics(&client))),
	)
	close(g.open)

	// expect checks the RPC each side reported since the last call, the
	// server's once it has returned, and that the client's code is the one
	// the caller got.
	expect := func(t *testing.T, method string, got error, code codes.Code, serverOutcome, clientOutcome metrics.Outcome) {
		t.Helper()
		if c := status.Code(got); c != code {
			t.Fatalf("the caller got %v (%v), want %v", c, got, code)
		}
		<-errs
		for _, side := range []struct {
			sink *recorder
			want metrics.Request
		}{
			{&server, metrics.Request{Protocol: metrics.GRPCServer, Method: method, Status: int(code), Outcome: serverOutcome}},
			{&client, metrics.Request{Protocol: metrics.GRPCClient, Method: method, Status: int(code), Outcome: clientOutcome}},
		} {
			reqs := side.sink.take()
			if len(reqs) != 1 || reqs[0].Latency <= 0 {
				t.Fatalf("got %+v, want one request with a latency", reqs)
			}
			reqs[0].Latency = 0
			if reqs[0] != side.want {
				t.Fatalf("got %+v, want %+v", reqs[0], side.want)
			}
		}
	}

	t.Run("served", func(t *testing.T) {
		answer <- nil
		_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{})
		<-g.entered
		expect(t, checkMethod, err, codes.OK, metrics.OutcomeServed, metrics.OutcomeServed)
	})
	t.Run("handler's status", func(t *testing.T) {
		answer <- status.Error(codes.NotFound, "no such service")
		_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{})
		<-g.entered
		expect(t, checkMethod, err, codes.NotFound, metrics.OutcomeError, metrics.OutcomeError)
	})
	t.Run("handler's plain error", func(t *testing.T) {
		answer <- errTest
		_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{})
		<-g.entered
		expect(t, checkMethod, err, codes.Unknown, metrics.OutcomeError, metrics.OutcomeError)
	})
	t.Run("handler returns its context's error", func(t *testing.T) {
		answer <- context.DeadlineExceeded
		_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{})
		<-g.entered
		expect(t, checkMethod, err, codes.DeadlineExceeded, metrics.OutcomeTimedOut, metrics.OutcomeTimedOut)
	})
	t.Run("stream served", func(t *testing.T) {
		stream, err := c.Watch(t.Context(), &healthpb.HealthCheckRequest{})
		for err == nil {
			_, err = stream.Recv()
		}
		<-g.entered
		if err == io.EOF {
			err = nil
		}
		expect(t, watchMethod, err, codes.OK, metrics.OutcomeServed, metrics.OutcomeServed)
	})
}

// A client that goes away is canceled on both sides; a call the server
// sheds is shed there, and an error for the client, which cannot tell a
// server's shedding from any other status it chose.
func TestMetricsOverConnectionShedAndCanceled(t *testing.T) {
	var server, client recorder
	g := newGate()
	errs := make(chan error, 4)
	c := serve(t, &healthServer{check: g.check},
		[]grpc.ServerOption{grpc.ChainUnaryInterceptor(returns(errs), towergrpc.UnaryServerInterceptor(
			towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1),
			towergrpc.WithServerMetrics(&server)))},
		grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack(), towergrpc.WithClientMetrics(&client))),
	)
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "first"})
		first <- err
	}()
	<-g.entered

	_, err := c.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "second"})
	checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
	<-errs
	outcomes(t, &server, metrics.OutcomeShed, codes.ResourceExhausted)
	outcomes(t, &client, metrics.OutcomeError, codes.ResourceExhausted)

	cancel()
	checkStatus(t, <-first, codes.Canceled, "context canceled")
	<-errs
	outcomes(t, &server, metrics.OutcomeCanceled, codes.Canceled)
	outcomes(t, &client, metrics.OutcomeCanceled, codes.Canceled)
}

// outcomes fails the test unless sink has recorded one request since the
// last take, with outcome and code.
func outcomes(t *testing.T, sink *recorder, outcome metrics.Outcome, code codes.Code) {
	t.Helper()
	reqs := sink.take()
	if len(reqs) != 1 || reqs[0].Outcome != outcome || reqs[0].Status != int(code) {
		t.Fatalf("got %+v, want one request %v with code %v", reqs, outcome, code)
	}
}
