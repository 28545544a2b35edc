package towergrpc

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
)

// DefaultPushback is the pushback a server interceptor sends with a call
// it sheds, unless [WithPushback] says otherwise: long enough for the
// calls in flight to finish, short enough that clients come back soon.
const DefaultPushback = time.Second

var defaultPushback = pushbackTrailer(strconv.FormatInt(DefaultPushback.Milliseconds(), 10))

// pushbackTrailer returns the trailer that carries the pushback v; grpc
// copies a trailer, so one serves every call.
func pushbackTrailer(v string) metadata.MD {
	return metadata.MD{PushbackKey: {v}}
}

// WithPushback sets the pushback a server interceptor sends, a
// [PushbackKey] trailer telling a client that follows gRPC's retry design
// (grpc's own retry, a [RetryPolicy]) how long to wait before it retries.
// It is sent with the calls the stack refuses (tower.IsOverloaded,
// tower.IsThrottled, tower.IsUnavailable, an error from Ready), never with
// a call the handler ran, and carries d in whole milliseconds, rounded up;
// an error that says when to try again ([tower.RetryAfter]) sends that
// instead, unless [WithNoRetry] is set. The default is [DefaultPushback];
// 0 sends none. It panics if d is negative.
func WithPushback(d time.Duration) ServerOption {
	if d < 0 {
		panic(fmt.Sprintf("towergrpc.WithPushback: d must not be negative, got %v", d))
	}
	var md metadata.MD
	if d > 0 {
		md = pushbackTrailer(wholeMillis(d))
	}
	return func(c *config) { c.pushback = md }
}

// wholeMillis is d in whole milliseconds, rounded up, as a pushback says.
func wholeMillis(d time.Duration) string {
	ms := d / time.Millisecond
	if d%time.Millisecond > 0 {
		ms++
	}
	return strconv.FormatInt(int64(ms), 10)
}

// WithNoRetry makes a server interceptor send, with each call it sheds
// (see [WithPushback]), a pushback of -1, which asks a client not to
// retry: for a server behind a layer that retries itself, where retries at
// every layer would multiply the load being shed.
func WithNoRetry() ServerOption {
	md := pushbackTrailer("-1")
	return func(c *config) { c.pushback = md }
}

// setPushback sends the pushback md, or the one err says, with the RPC of
// ctx, if it has a stream: an interceptor called outside a grpc server has
// none.
func setPushback(ctx context.Context, md metadata.MD, err error) {
	st := grpc.ServerTransportStreamFromContext(ctx)
	if st == nil {
		return
	}
	if d, ok := tower.RetryAfter(err); ok && md[PushbackKey][0] != "-1" {
		md = pushbackTrailer(wholeMillis(d))
	}
	st.SetTrailer(md)
}
