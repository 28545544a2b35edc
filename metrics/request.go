package metrics

import "time"

// A RequestSink receives one [Request] for each request that a protocol
// adapter (an HTTP handler, a gRPC interceptor) served or refused, given
// with the adapter's request-metrics option: unlike a Sink, it hears what
// only the adapter knows (method, route, status). It runs on the request
// path, once per request, after the response: it must be safe for
// concurrent use, and cheap. It should ignore a Protocol it does not know,
// so that protocols can be added.
type RequestSink interface {
	// ObserveRequest records r.
	ObserveRequest(r Request)
}

// A Request is what an adapter knows of one request once it has ended.
// Which fields it fills, and what they hold, depends on Protocol.
type Request struct {
	Protocol Protocol // which adapter observed the request
	// Method is, over HTTP, the method as the client sent it, "GET"; over
	// gRPC, the method's full name, "/package.Service/Method".
	Method string
	// Route is, on an HTTP server, the path of the pattern of the
	// http.ServeMux route the request matched, "/items/{id}"; "" if it
	// matched none, or the Handler could not know it, and over gRPC.
	Route  string
	Scheme string // over HTTP, "http" or "https"; over gRPC, ""
	// Status is, over HTTP, the status code of the response sent, or 0 if
	// none was; over gRPC, the codes.Code (0 for OK).
	Status  int
	Outcome Outcome // [OutcomeOf] the error the stack returned
	// Latency is from the request's arrival to its response, readiness
	// included, on a server; from the call to its return, on a client. A
	// stream's is its whole life, from its opening to its end.
	Latency time.Duration
}

// A Protocol says which adapter observed a [Request], and so what its
// fields hold.
type Protocol uint8

const (
	HTTPServer Protocol = iota + 1 // a request a towerhttp.Handler served
	GRPCServer                     // an RPC, unary or streaming, a gRPC server interceptor served
	GRPCClient                     // an RPC, unary or streaming, made through a gRPC client interceptor
)

// NumProtocols is one more than the largest Protocol.
const NumProtocols = int(GRPCClient) + 1

var protocolNames = [NumProtocols]string{HTTPServer: "http-server", GRPCServer: "grpc-server", GRPCClient: "grpc-client"}

// String returns "http-server", "grpc-server", "grpc-client", or
// "Protocol(n)" if unknown.
func (p Protocol) String() string { return name(p, "Protocol", protocolNames[:]) }
