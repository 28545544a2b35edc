package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/towergo/tower/towerproxy/proxy"
)

// A traced request continues its client's trace: the proxy's server span
// is a child of the client's, each attempt a child of that, and the
// backend gets the attempt's span as its parent in traceparent.
func TestTracePropagatedToBackend(t *testing.T) {
	var mu sync.Mutex
	var got []string
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Traceparent"))
		mu.Unlock()
	}))
	t.Cleanup(b.Close)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	s := startObserved(t, "access_log: off\nroutes: [{path: /api, upstream: web}]\nupstreams:\n  web: {backends: [{b0}]}\n", []*httptest.Server{b}, proxy.WithTracerProvider(tp))

	const client = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req, _ := http.NewRequest("GET", s.front.URL+"/api/items", nil)
	req.Header.Set("Traceparent", client)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	spans := exp.GetSpans()
	var server, attempt *tracetest.SpanStub
	for i := range spans {
		switch spans[i].SpanKind {
		case trace.SpanKindServer:
			server = &spans[i]
		case trace.SpanKindClient:
			attempt = &spans[i]
		}
	}
	if server == nil || attempt == nil {
		t.Fatalf("got spans %v, want a server span and a client span", names(spans))
	}
	if server.Name != "GET /api" {
		t.Errorf("server span %q, want GET /api", server.Name)
	}
	if tid := server.SpanContext.TraceID().String(); tid != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("server span in trace %s, want the client's", tid)
	}
	if p := server.Parent.SpanID().String(); p != "00f067aa0ba902b7" {
		t.Errorf("server span's parent %s, want the client's span", p)
	}
	if attempt.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("attempt's parent %s, want the server span %s", attempt.Parent.SpanID(), server.SpanContext.SpanID())
	}
	mu.Lock()
	defer mu.Unlock()
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(t.Context(), propagation.HeaderCarrier{"Traceparent": got}))
	if len(got) != 1 || sc.TraceID() != server.SpanContext.TraceID() || sc.SpanID() != attempt.SpanContext.SpanID() || !sc.IsSampled() {
		t.Errorf("backend got traceparent %q, want trace %s, parent %s, sampled", got, server.SpanContext.TraceID(), attempt.SpanContext.SpanID())
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
