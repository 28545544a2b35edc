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

// A setKey is what the attribute set of a request depends on.
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

// attributes returns the options that record r with its attributes,
// kept for the next request of the set if there is room.
func (s *RequestSink) attributes(r *metrics.Request) []metric.RecordOption {
	k := setKey{status: r.Status, outcome: r.Outcome}
	if r.Protocol == metrics.HTTPServer {
		k.method, k.route, k.scheme = other, r.Route, r.Scheme
		if m, ok := s.known[r.Method]; ok {
			k.method = m // not r.Method: a set kept does not keep the request's string
		}
	} else {
		k.method = strings.TrimPrefix(r.Method, "/") // rpc.method: "pkg.Svc/M" for "/pkg.Svc/M"
		if k.method == "" {
			k.method = other
		}
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

// newSet returns the attribute set of p's requests with k's values.
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
		if k.outcome != metrics.OutcomeServed {
			errType = k.outcome.String()
		} else if k.status >= 500 {
			errType = strconv.Itoa(k.status)
		}
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

// grpcErrorType returns the error.type of an RPC of protocol p (see the
// package doc), or "" for none.
func grpcErrorType(p metrics.Protocol, code int, out metrics.Outcome) string {
	failed := code != 0 && (p == metrics.GRPCClient || code < 0 || code >= len(grpcCodes))
	switch code {
	case 2, 4, 12, 13, 14, 15: // UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS
		failed = true
	}
	if failed {
		return grpcCodeName(code)
	}
	switch out {
	case metrics.OutcomeShed, metrics.OutcomeThrottled, metrics.OutcomeTimedOut:
		return out.String()
	}
	return ""
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
