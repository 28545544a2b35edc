package towerotel

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/towergo/tower/metrics"
)

// DefaultKnownMethods returns the HTTP methods a RequestSink records as
// they are, unless [WithKnownMethods] says otherwise: those the semantic
// conventions call known. Each call returns a new slice.
func DefaultKnownMethods() []string {
	return []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY", "TRACE"}
}

// other is the value of a method the RequestSink does not know.
const other = "_OTHER"

// maxSets is how many attribute sets a RequestSink keeps per protocol: the
// SDK's default cardinality limit, beyond which it folds new sets into one
// overflow series anyway.
const maxSets = 2000

// A setKey is what the attribute set of a request depends on, once the
// values a client chooses are bounded.
type setKey struct {
	method, route, scheme string
	status                int
	outcome               metrics.Outcome
}

// A setCache keeps the record options of each attribute set of one
// protocol seen so far, up to maxSets of them.
type setCache struct {
	m sync.Map // setKey to []metric.RecordOption
	n atomic.Int64
}

// attributes returns the options that record r with its attributes: a
// kept set, or one made now and kept if there is room.
func (s *RequestSink) attributes(r *metrics.Request) []metric.RecordOption {
	k := setKey{status: r.Status, outcome: r.Outcome}
	if r.Protocol == metrics.HTTPServer {
		k.method, k.route, k.scheme = s.method(r.Method), r.Route, r.Scheme
	} else {
		k.method = rpcMethod(r.Method)
	}
	c := &s.sets[r.Protocol]
	if opts, ok := c.m.Load(k); ok {
		return opts.([]metric.RecordOption)
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(s.newSet(r.Protocol, &k))}
	if c.n.Load() < maxSets {
		if kept, loaded := c.m.LoadOrStore(k, opts); loaded {
			return kept.([]metric.RecordOption)
		}
		c.n.Add(1)
	}
	return opts
}

// method returns m if the RequestSink knows it, or "_OTHER".
func (s *RequestSink) method(m string) string {
	if known, ok := s.known[m]; ok {
		return known // not m: a set kept does not keep the request's string
	}
	return other
}

// rpcMethod returns the rpc.method of a gRPC full method: "pkg.Svc/M" for
// "/pkg.Svc/M", or "_OTHER" for none.
func rpcMethod(full string) string {
	if m := strings.TrimPrefix(full, "/"); m != "" {
		return m
	}
	return other
}

// newSet returns the attribute set of protocol p's requests with k's
// values.
func (s *RequestSink) newSet(p metrics.Protocol, k *setKey) attribute.Set {
	kv := append(make([]attribute.KeyValue, 0, len(s.base)+7), s.base...)
	var errType string
	if p == metrics.HTTPServer {
		kv = append(kv, semconv.HTTPRequestMethodKey.String(k.method))
		if k.route != "" {
			kv = append(kv, semconv.HTTPRouteKey.String(k.route))
		}
		if k.status != 0 {
			kv = append(kv, semconv.HTTPResponseStatusCodeKey.Int(k.status))
		}
		if k.scheme != "" {
			kv = append(kv, semconv.URLSchemeKey.String(k.scheme))
		}
		errType = httpErrorType(k.status, k.outcome)
	} else {
		kv = append(kv, semconv.RPCSystemNameGRPC,
			semconv.RPCMethodKey.String(k.method),
			semconv.RPCResponseStatusCodeKey.String(grpcCodeName(k.status)))
		errType = grpcErrorType(p, k.status, k.outcome)
	}
	if errType != "" {
		kv = append(kv, semconv.ErrorTypeKey.String(errType))
	}
	kv = append(kv, OutcomeKey.String(k.outcome.String()))
	return attribute.NewSet(kv...)
}

// httpErrorType returns the error.type of an HTTP request (see
// RequestSink), or "" for none.
func httpErrorType(status int, out metrics.Outcome) string {
	if out != metrics.OutcomeServed {
		return out.String()
	}
	if status >= 500 {
		return strconv.Itoa(status)
	}
	return ""
}

// grpcErrorType returns the error.type of an RPC of protocol p (see
// RequestSink), or "" for none.
func grpcErrorType(p metrics.Protocol, code int, out metrics.Outcome) string {
	if grpcFailed(p, code) {
		return grpcCodeName(code)
	}
	switch out {
	case metrics.OutcomeShed, metrics.OutcomeThrottled, metrics.OutcomeTimedOut:
		return out.String()
	}
	return ""
}

// grpcFailed reports whether the convention counts status code as an
// error on p's side: on a client any but OK, on a server the six below,
// and on both a code gRPC does not define.
func grpcFailed(p metrics.Protocol, code int) bool {
	if code == 0 {
		return false
	}
	if p == metrics.GRPCClient || code < 0 || code >= len(grpcCodes) {
		return true
	}
	switch code {
	case 2, 4, 12, 13, 14, 15: // UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS
		return true
	}
	return false
}

// grpcCodes are the names of gRPC's status codes, by value, as
// rpc.response.status_code has them.
var grpcCodes = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// grpcCodeName returns the name of status code, or its number for a code
// gRPC does not define.
func grpcCodeName(code int) string {
	if code >= 0 && code < len(grpcCodes) {
		return grpcCodes[code]
	}
	return strconv.Itoa(code)
}
