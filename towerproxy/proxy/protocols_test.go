package proxy_test

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"testing"
)

// protoBackend answers the protocol its request came with.
func protoBackend(t *testing.T, h2c bool) string {
	return newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}), func(s *http.Server) {
		if h2c {
			s.Protocols = new(http.Protocols)
			s.Protocols.SetHTTP1(true)
			s.Protocols.SetUnencryptedHTTP2(true)
		}
	}).URL
}

// HTTP/1.1 clients keep their connection: the second request goes on the
// first one's.
func TestKeepAlive(t *testing.T) {
	p := startProxy(t, config([]string{protoBackend(t, false)}, "", ""))
	c := client(t)
	var reused []bool
	for range 3 {
		req, _ := http.NewRequest("GET", p.URL("/"), nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) },
		}))
		res, body := do(t, c, req)
		if res.StatusCode != 200 || res.Proto != "HTTP/1.1" || body != "HTTP/1.1" {
			t.Fatalf("got %d %s %q, want 200 HTTP/1.1 from an HTTP/1.1 backend", res.StatusCode, res.Proto, body)
		}
	}
	if fmt.Sprint(reused) != "[false true true]" {
		t.Errorf("got connections reused %v, want [false true true]", reused)
	}
}

// With tls, the proxy serves HTTPS from the files, and HTTP/2 to the
// clients that offer it by ALPN, HTTP/1.1 to the others.
func TestTLSServesHTTP2ByALPN(t *testing.T) {
	cert, key, pool := writeCert(t)
	p := startProxy(t, config([]string{protoBackend(t, false)}, fmt.Sprintf("tls: {cert: %s, key: %s}", cert, key), ""))
	for _, c := range []struct {
		name string
		h2   bool
		want string
	}{{"h2", true, "HTTP/2.0"}, {"http/1.1", false, "HTTP/1.1"}} {
		t.Run(c.name, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: tlsConfig(pool), ForceAttemptHTTP2: c.h2}
			t.Cleanup(tr.CloseIdleConnections)
			res, body := do(t, &http.Client{Transport: tr}, mustRequest(t, "GET", "https://"+p.Addr+"/", nil))
			if res.StatusCode != 200 || res.Proto != c.want || body != "HTTP/1.1" {
				t.Errorf("got %d %s %q, want 200 %s from an HTTP/1.1 backend", res.StatusCode, res.Proto, body, c.want)
			}
		})
	}
}

// With h2c, the proxy takes HTTP/2 without TLS from clients that know it
// does (prior knowledge), as gRPC clients do; without, it refuses them.
func TestH2CPriorKnowledge(t *testing.T) {
	backend := protoBackend(t, false)
	for _, c := range []struct {
		name string
		top  string
		ok   bool
	}{{"on", "h2c: true", true}, {"off", "", false}} {
		t.Run(c.name, func(t *testing.T) {
			p := startProxy(t, config([]string{backend}, c.top, ""))
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetUnencryptedHTTP2(true)
			t.Cleanup(tr.CloseIdleConnections)
			res, err := (&http.Client{Transport: tr}).Get(p.URL("/"))
			if !c.ok {
				if err == nil {
					res.Body.Close()
					t.Fatalf("got %s %d, want the HTTP/2 connection refused", res.Proto, res.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 || res.Proto != "HTTP/2.0" {
				t.Errorf("got %d %s, want 200 HTTP/2.0", res.StatusCode, res.Proto)
			}
		})
	}
}

// With protocol h2c, the proxy talks HTTP/2 without TLS to the backends,
// whatever the client spoke.
func TestH2CToBackends(t *testing.T) {
	p := startProxy(t, config([]string{protoBackend(t, true)}, "", "protocol: h2c"))
	res, body := do(t, client(t), mustRequest(t, "GET", p.URL("/"), nil))
	if res.StatusCode != 200 || body != "HTTP/2.0" {
		t.Errorf("got %d %q, want 200 from the backend over HTTP/2.0", res.StatusCode, body)
	}
}
