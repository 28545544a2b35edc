package proxy

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// gRPC status codes the proxy answers with (google.golang.org/grpc/codes).
const (
	grpcDeadlineExceeded  = 4
	grpcResourceExhausted = 8
	grpcInternal          = 13
	grpcUnavailable       = 14
)

// isGRPC reports whether r is a gRPC call: its content type is
// application/grpc, alone or with a subtype (+proto, +json) or parameters.
func isGRPC(r *http.Request) bool {
	ct, ok := strings.CutPrefix(r.Header.Get("Content-Type"), "application/grpc")
	return ok && (ct == "" || ct[0] == '+' || ct[0] == ';')
}

// grpcTimeout parses a grpc-timeout header: at most eight digits and a
// unit, H, M, S, m (milliseconds), u or n.
func grpcTimeout(v string) (time.Duration, bool) {
	if len(v) < 2 || len(v) > 9 {
		return 0, false
	}
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 64)
	if err != nil {
		return 0, false
	}
	var unit time.Duration
	switch v[len(v)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// grpcDeadline returns the deadline a gRPC call's client gave it
// (grpc-timeout), for the proxy to hold the call to: a call is not worth
// going on with, nor retrying, once its client has given up on it, and a
// backend that ends it at the deadline does so a moment before its
// client does, so that the proxy's answer may reach the client first.
func grpcDeadline(r *http.Request) (time.Duration, bool) {
	if !isGRPC(r) {
		return 0, false
	}
	return grpcTimeout(r.Header.Get("Grpc-Timeout"))
}

// deadlinePassed reports whether r's context has a deadline, and it has
// passed.
func deadlinePassed(r *http.Request) bool {
	d, ok := r.Context().Deadline()
	return ok && !time.Now().Before(d)
}

// grpcFail answers a gRPC call the proxy got no response for as gRPC's
// Trailers-Only response: status 200 and a header block with grpc-status
// and grpc-message, ending the stream, which a gRPC client reads as the
// call's status. A plain HTTP error status would reach it only through
// gRPC's mapping of HTTP codes, which has no DEADLINE_EXCEEDED.
func grpcFail(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(code))
	h.Set("Grpc-Message", grpcMessage(msg))
	w.WriteHeader(http.StatusOK)
}

// grpcMessage percent-encodes msg as grpc-message requires: every byte
// outside printable ASCII, and '%'.
func grpcMessage(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c < ' ' || c > '~' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
