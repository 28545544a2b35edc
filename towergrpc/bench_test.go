package towergrpc_test

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
)

// The benchmarks call the interceptors directly, with a handler or invoker
// that answers at once: they measure what an interceptor adds to an RPC,
// without grpc's own cost, which is some microseconds over a connection.

var (
	sinkRes any
	sinkErr error
)

type benchStack[Req, Res any] struct {
	name    string
	stack   tower.Layer[Req, Res]
	metrics bool // measured with a metrics.Counts as well
}

// stacks returns the stacks measured: none, each layer alone, and the
// stack the package doc shows. With shed, the limit's one permit is taken,
// so every call is shed.
func stacks[Req, Res any](b *testing.B) []benchStack[Req, Res] {
	full := limit.NewSemaphore(1)
	p, err := limit.NewSharedConcurrencyLayer[Req, Res](full).Wrap(tower.ServiceFunc[Req, Res](func(context.Context, Req) (Res, error) {
		var zero Res
		return zero, nil
	})).Ready(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Release)
	return []benchStack[Req, Res]{
		{"no layers", tower.Stack[Req, Res](), true},
		{"ConcurrencyLimit", limit.NewConcurrencyLayer[Req, Res](1000), false},
		{"Timeout", timeout.NewLayer[Req, Res](time.Second), false},
		{"LoadShed>Timeout>ConcurrencyLimit", tower.Stack(
			loadshed.NewLayer[Req, Res](),
			timeout.NewLayer[Req, Res](time.Second),
			limit.NewConcurrencyLayer[Req, Res](1000),
		), true},
		{"LoadShed>ConcurrencyLimit, shed", tower.Stack(
			loadshed.NewLayer[Req, Res](),
			limit.NewSharedConcurrencyLayer[Req, Res](full),
		), true},
	}
}

func BenchmarkUnaryServerInterceptor(b *testing.B) {
	handler := func(_ context.Context, req any) (any, error) { return req, nil }
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Service/Unary"}
	req := any("req")
	b.Run("handler alone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkRes, sinkErr = handler(b.Context(), req)
		}
	})
	run := func(name string, intercept grpc.UnaryServerInterceptor) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := b.Context()
			for b.Loop() {
				sinkRes, sinkErr = intercept(ctx, req, info, handler)
			}
		})
	}
	for _, s := range stacks[unaryCall, any](b) {
		run(s.name, towergrpc.UnaryServerInterceptor(s.stack))
		if s.metrics {
			run(s.name+", metrics", towergrpc.UnaryServerInterceptor(s.stack, towergrpc.WithServerMetrics(new(metrics.Counts))))
		}
	}
}

func BenchmarkUnaryServerInterceptorParallel(b *testing.B) {
	handler := func(_ context.Context, req any) (any, error) { return req, nil }
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Service/Unary"}
	for _, s := range stacks[unaryCall, any](b)[3:] {
		intercept := towergrpc.UnaryServerInterceptor(s.stack)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := b.Context()
			b.RunParallel(func(pb *testing.PB) {
				var err error
				for pb.Next() {
					_, err = intercept(ctx, "req", info, handler)
				}
				if err != nil && s.name == "LoadShed>Timeout>ConcurrencyLimit" {
					b.Error(err)
				}
			})
		})
	}
}

func BenchmarkUnaryClientInterceptor(b *testing.B) {
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	b.Run("invoker alone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkErr = invoker(b.Context(), "/test.Service/Unary", "req", nil, nil)
		}
	})
	run := func(name string, intercept grpc.UnaryClientInterceptor) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := b.Context()
			for b.Loop() {
				sinkErr = intercept(ctx, "/test.Service/Unary", "req", nil, nil, invoker)
			}
		})
	}
	for _, s := range stacks[unaryClientCall, struct{}](b) {
		run(s.name, towergrpc.UnaryClientInterceptor(s.stack))
		if s.metrics {
			run(s.name+", metrics", towergrpc.UnaryClientInterceptor(s.stack, towergrpc.WithClientMetrics(new(metrics.Counts))))
		}
	}
}

// A server stream costs one allocation more than a unary call: the stream
// whose Context is the stack's.
func BenchmarkStreamServerInterceptor(b *testing.B) {
	benchStreamServer(b, towergrpc.StreamServerInterceptor(limit.NewConcurrencyLayer[streamCall, struct{}](1000)))
}

// Request metrics add no allocation to a server stream.
func BenchmarkStreamServerInterceptorMetrics(b *testing.B) {
	benchStreamServer(b, towergrpc.StreamServerInterceptor(limit.NewConcurrencyLayer[streamCall, struct{}](1000),
		towergrpc.WithServerMetrics(new(metrics.Counts))))
}

func benchStreamServer(b *testing.B, intercept grpc.StreamServerInterceptor) {
	handler := func(any, grpc.ServerStream) error { return nil }
	info := &grpc.StreamServerInfo{FullMethod: "/test.Service/Stream"}
	ss := &fakeServerStream{ctx: b.Context()}
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = intercept(nil, ss, info, handler)
	}
}

// A client stream runs the stack's call on a goroutine for the stream's
// life: opening one and reading it to its end.
func BenchmarkStreamClientInterceptor(b *testing.B) {
	benchStreamClient(b, towergrpc.StreamClientInterceptor(limit.NewConcurrencyLayer[streamClientCall, struct{}](1000)))
}

// Request metrics add no allocation to a client stream.
func BenchmarkStreamClientInterceptorMetrics(b *testing.B) {
	benchStreamClient(b, towergrpc.StreamClientInterceptor(limit.NewConcurrencyLayer[streamClientCall, struct{}](1000),
		towergrpc.WithClientMetrics(new(metrics.Counts))))
}

func benchStreamClient(b *testing.B, intercept grpc.StreamClientInterceptor) {
	desc := &grpc.StreamDesc{ServerStreams: true}
	streamer := streamerOf(&fakeClientStream{recv: io.EOF}, nil)
	b.ReportAllocs()
	ctx := b.Context()
	for b.Loop() {
		cs, err := intercept(ctx, desc, nil, "/test.Service/Stream", streamer)
		if err != nil {
			b.Fatal(err)
		}
		sinkErr = cs.RecvMsg(nil)
	}
}
