package towergrpc

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
)

// DefaultPushback is the pushback a server interceptor sends, in the
// [PushbackKey] trailer, with a call it sheds, unless [WithPushback] says
// otherwise: one second, as towerhttp's DefaultRetryAfter, long enough for
// the calls in flight to finish (they are meant to take milliseconds),
// short enough that a client does not stay away long once the burst has
// passed.
const DefaultPushback = time.Second

var defaultPushback = pushbackTrailer(strconv.FormatInt(DefaultPushback.Milliseconds(), 10))

// pushbackTrailer returns the trailer that carries the pushback v. grpc
// copies a trailer it is given, so one trailer serves every call.
func pushbackTrailer(v string) metadata.MD {
	return metadata.MD{PushbackKey: {v}}
}

// WithPushback sets the pushback a server interceptor sends when it sheds
// a call: a [PushbackKey] trailer that tells a client that follows gRPC's
// retry design (grpc's own retry, a [RetryPolicy]) how long to wait
// before it retries. It is sent with the calls the stack refuses for
// overload or throttling (an error that answers tower.IsOverloaded or
// tower.IsThrottled: codes.ResourceExhausted), or because it takes none
// (tower.IsUnavailable, or an error from Ready: codes.Unavailable), as
// towerhttp's Handler sends Retry-After; never with a call the handler
// ran. The trailer carries whole milliseconds, d rounded up: math.MaxInt64
// sends 9223372036855. An error that says when to try again itself
// ([tower.RetryAfter]: a per-key limit's, the time until the key's next
// token) sends that instead, rounded up the same way, unless [WithNoRetry]
// asks for no retry. The default is [DefaultPushback]; 0 sends no
// pushback. It panics if d is negative: to ask clients not to retry, use
// [WithNoRetry].
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
// (see [WithPushback]), a pushback of -1, which asks a client that follows
// gRPC's retry design not to retry it at all: for a server whose clients
// should go elsewhere, or give up, rather than come back, such as one
// behind a layer that retries itself, where retries at every layer would
// multiply the load the server is shedding.
func WithNoRetry() ServerOption {
	md := pushbackTrailer("-1")
	return func(c *config) { c.pushback = md }
}

// shed reports whether a call's err says the stack refused it: the calls
// a pushback is sent with.
func shed(err error) bool {
	return refused(err) && !panicked(err)
}

// setPushback sets the pushback md, or the one err says (see
// [WithPushback]), on the stream st, if there is one: an interceptor
// called outside a grpc server has none.
func setPushback(st grpc.ServerTransportStream, md metadata.MD, err error) {
	if st == nil {
		return
	}
	if d, ok := tower.RetryAfter(err); ok && md[PushbackKey][0] != "-1" {
		md = pushbackTrailer(wholeMillis(d))
	}
	st.SetTrailer(md)
}
