package proxy_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/towergo/tower/towerproxy/proxy"
)

// resolver is a fake DNS: the addresses and SRV records it answers are
// the test's to change.
type resolver struct {
	mu    sync.Mutex
	addrs []netip.Addr
	srvs  []*net.SRV
}

func (r *resolver) set(addrs []netip.Addr, srvs []*net.SRV) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs, r.srvs = addrs, srvs
}

func (r *resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if network != "ip" || host != "backends.test" {
		return nil, fmt.Errorf("lookup %s %s: no such host", network, host)
	}
	return append([]netip.Addr(nil), r.addrs...), nil
}

func (r *resolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if service != "" || proto != "" || name != "_http._tcp.backends.test" {
		return "", nil, fmt.Errorf("lookup SRV %s %s %s: no such name", service, proto, name)
	}
	return name, append([]*net.SRV(nil), r.srvs...), nil
}

// onAddr starts a backend that answers its name on addr, host:port.
func onAddr(t *testing.T, addr, name string) (*httptest.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := httptest.NewUnstartedServer(named(name))
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s, nil
}

// twoAddresses starts backends "v4" on 127.0.0.1 and "v6" on ::1, on one
// port, as the A and AAAA records of one name give them, and returns the
// port.
func twoAddresses(t *testing.T) int {
	for range 20 {
		v4, err := onAddr(t, "127.0.0.1:0", "v4")
		if err != nil {
			t.Fatal(err)
		}
		port := v4.Listener.Addr().(*net.TCPAddr).Port
		if _, err := onAddr(t, "[::1]:"+strconv.Itoa(port), "v6"); err == nil {
			return port
		}
		v4.Close() // the port is taken on ::1: try another
	}
	t.Fatal("no port free on both 127.0.0.1 and ::1")
	return 0
}

// answeredBy waits until the next 10 requests are all answered by name.
func answeredBy(t *testing.T, c *http.Client, url, name string) {
	t.Helper()
	eventually(t, "10 requests in a row answered by "+name, func() bool {
		for range 10 {
			if a := send(t, c, "GET", url, ""); a.body != name {
				return false
			}
		}
		return true
	})
}

// DNS discovery, re-resolved every 50ms with a fake resolver: the A and
// AAAA records of a name, with the configured port, and SRV records with
// their own; traffic follows the records as they change.
func TestDNSDiscovery(t *testing.T) {
	t.Run("A and AAAA", func(t *testing.T) {
		port := twoAddresses(t)
		r := &resolver{}
		v4, v6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
		r.set([]netip.Addr{v4}, nil)
		cfg, err := proxy.Parse("test.yaml", fmt.Appendf(nil, `
routes: [{upstream: u}]
upstreams:
  u: {dns: {name: backends.test, port: %d, every: 50ms}}
`, port))
		if err != nil {
			t.Fatal(err)
		}
		p := startConfig(t, cfg, proxy.WithResolver(r))
		c := newClient(t)
		answeredBy(t, c, p.URL+"/", "v4")
		r.set([]netip.Addr{v6}, nil)
		answeredBy(t, c, p.URL+"/", "v6")
		r.set([]netip.Addr{v4}, nil)
		answeredBy(t, c, p.URL+"/", "v4")
	})
	t.Run("SRV", func(t *testing.T) {
		a, b := newCounted(t, named("a")), newCounted(t, named("b"))
		srv := func(s *counted) *net.SRV {
			return &net.SRV{Target: "127.0.0.1.", Port: uint16(s.Listener.Addr().(*net.TCPAddr).Port)}
		}
		r := &resolver{}
		r.set(nil, []*net.SRV{srv(a)})
		cfg, err := proxy.Parse("test.yaml", []byte(`
routes: [{upstream: u}]
upstreams:
  u: {dns: {name: _http._tcp.backends.test, srv: true, every: 50ms}}
`))
		if err != nil {
			t.Fatal(err)
		}
		p := startConfig(t, cfg, proxy.WithResolver(r))
		c := newClient(t)
		answeredBy(t, c, p.URL+"/", "a")
		r.set(nil, []*net.SRV{srv(b)})
		answeredBy(t, c, p.URL+"/", "b")
	})
}

// File discovery: the file is read again once a second, and traffic
// follows what it lists, however it is rewritten (in place, or replaced);
// a file with a bad line changes nothing and is reported, until fixed.
func TestFileDiscovery(t *testing.T) {
	a, b := newCounted(t, named("a")), newCounted(t, named("b"))
	file := filepath.Join(t.TempDir(), "backends")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# the backends\n" + a.URL + "\n")
	p := start(t, `
routes: [{upstream: u}]
upstreams:
  u: {file: %q}
`, file)
	c := newClient(t)
	answeredBy(t, c, p.URL+"/", "a")

	write(b.URL + " # a is gone\n")
	answeredBy(t, c, p.URL+"/", "b")

	write(a.URL + "\nnot a URL\n")
	eventually(t, "the bad line reported", func() bool {
		return p.logs.count("proxy: upstream discovery") == 1
	})
	answeredBy(t, c, p.URL+"/", "b")

	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(a.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	answeredBy(t, c, p.URL+"/", "a")
	if n := p.logs.count("proxy: upstream discovery"); n != 1 {
		t.Errorf("got %d reports of the discovery, want the bad line's only", n)
	}
}
