package proxy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// running is a proxy serving on loopback: Addr takes the proxied
// traffic, Admin the admin handler.
type running struct {
	Addr, Admin string
	Proxy       *proxy.Proxy
	stop        func() error
}

// URL returns the proxy's URL for path, over plain HTTP.
func (r *running) URL(path string) string { return "http://" + r.Addr + path }

// startProxy parses the YAML configuration conf, builds its proxy and
// serves it with the real Server on loopback listeners of its own. The
// proxy is drained when the test ends, within 10s.
func startProxy(t *testing.T, conf string) *running {
	t.Helper()
	cfg, err := proxy.Parse("test.yaml", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	p, err := proxy.New(cfg, proxy.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.NewServer(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	main, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListeners(ctx, main, admin) }()
	r := &running{Addr: main.Addr().String(), Admin: admin.Addr().String(), Proxy: p}
	var stopped bool
	var stopErr error
	r.stop = func() error {
		if stopped {
			return stopErr
		}
		stopped = true
		cancel()
		select {
		case stopErr = <-done:
		case <-time.After(20 * time.Second):
			stopErr = fmt.Errorf("the proxy did not drain within 20s")
		}
		return stopErr
	}
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Errorf("drain: %v", err)
		}
	})
	return r
}

// config returns a YAML configuration that listens on loopback, with one
// route to upstream a over backends: top is YAML added at the top level,
// up lines of YAML added under upstream a.
func config(backends []string, top, up string) string {
	var b strings.Builder
	b.WriteString("listen: 127.0.0.1:0\nadmin: 127.0.0.1:0\naccess_log: off\n")
	b.WriteString(top)
	b.WriteString("\nroutes: [{path: /, upstream: a}]\nupstreams:\n  a:\n    backends: [")
	b.WriteString(strings.Join(backends, ", "))
	b.WriteString("]\n")
	for line := range strings.SplitSeq(strings.TrimSpace(up), "\n") {
		if line != "" {
			b.WriteString("    " + strings.TrimSpace(line) + "\n")
		}
	}
	return b.String()
}

// newBackend starts a backend on loopback that serves h, closed when the
// test ends; set, if any, configures its server before it starts.
func newBackend(t *testing.T, h http.Handler, set ...func(*http.Server)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	for _, f := range set {
		f(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// client returns an HTTP/1.1 client whose requests time out after 10s.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// do sends req with c and returns the status and the body.
func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return res, string(b)
}

// writeCert writes a self-signed certificate for 127.0.0.1 and
// localhost, and its key, to PEM files in a temporary directory, and
// returns their paths and a pool that trusts the certificate.
func writeCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "towerproxy test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// tlsConfig returns a client TLS configuration that trusts pool.
func tlsConfig(pool *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}

// mustRequest returns a new request, with the test's context.
func mustRequest(t *testing.T, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// tlsDial opens a TLS connection to addr that speaks HTTP/1.1, whose
// every wait ends within 10s.
func tlsDial(addr string, pool *x509.CertPool) (net.Conn, error) {
	cfg := tlsConfig(pool)
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, nil
}
