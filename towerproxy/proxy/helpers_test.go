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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// waitFor bounds every wait of these tests: a request, a condition
// polled for. A machine busy with other work still answers a request on
// loopback well within it.
const waitFor = 10 * time.Second

// newClient returns a client whose requests give up after waitFor.
func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: waitFor}
}

// answer is a request's answer as the client saw it.
type answer struct {
	code       int
	body       string
	retryAfter string
	err        error
}

// send sends a request with method and body ("" for none) and returns the
// answer, its body read whole.
func send(t *testing.T, c *http.Client, method, url, body string, header ...string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{code: res.StatusCode, body: string(b), retryAfter: res.Header.Get("Retry-After"), err: err}
}

// counted is a backend on loopback that counts its requests and answers
// each with h.
type counted struct {
	*httptest.Server
	n atomic.Int64
}

func newCounted(t *testing.T, h http.HandlerFunc) *counted {
	t.Helper()
	c := &counted{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		h(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// hits is the number of requests the backend got.
func (c *counted) hits() int64 { return c.n.Load() }

// named answers 200 with name.
func named(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }
}

// status answers code, with body "code".
func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, fmt.Sprint(code), code) }
}

// logs records the messages the proxy logs, for the tests that look at
// its events (a backend ejected, down or up).
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logs) WithGroup(string) slog.Handler            { return l }

func (l *logs) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}

// count returns the number of messages that start with msg and hold each
// of attrs ("key=value").
func (l *logs) count(msg string, attrs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.HasPrefix(m, msg) && all(m, attrs) {
			n++
		}
	}
	return n
}

func all(m string, attrs []string) bool {
	for _, a := range attrs {
		if !strings.Contains(m, " "+a+" ") && !strings.HasSuffix(m, " "+a) {
			return false
		}
	}
	return true
}

// started is a Proxy of a configuration, in front of a test server.
type started struct {
	*proxy.Proxy
	URL  string
	logs *logs
}

// start parses yaml, which names the backends as the format's verbs do
// with args, and runs its Proxy behind a test server on loopback, until
// the test ends.
func start(t *testing.T, yaml string, args ...any) *started {
	t.Helper()
	cfg, err := proxy.Parse("test.yaml", fmt.Appendf(nil, yaml, args...))
	if err != nil {
		t.Fatal(err)
	}
	return startConfig(t, cfg)
}

func startConfig(t *testing.T, cfg *proxy.Config, opts ...proxy.Option) *started {
	t.Helper()
	quiet(cfg)
	l := &logs{}
	p, err := proxy.New(cfg, append([]proxy.Option{proxy.WithLogger(slog.New(l))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &started{Proxy: p, URL: srv.URL, logs: l}
}

// quiet turns off an access log to stdout, the default: the test helpers'
// proxies would otherwise write tens of thousands of lines in a run,
// burying the one that says which test failed. A test of the access log
// names a file.
func quiet(cfg *proxy.Config) {
	if cfg.AccessLog == "stdout" {
		cfg.AccessLog = "off"
	}
}

// eventually polls cond until it holds, for up to waitFor, and fails the
// test with what if it never does.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", waitFor, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

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
	quiet(cfg)
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
