package discover_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/towertest"
)

// fakeResolver answers lookups from a script, one answer per lookup; the
// last answer repeats. It records when each lookup started, since its
// creation, and what it was asked.
type fakeResolver struct {
	start   time.Time
	delay   time.Duration // each lookup takes this long
	answers []fakeAnswer

	mu    sync.Mutex
	at    []time.Duration
	asked []string
}

type fakeAnswer struct {
	addrs []string // IP addresses, or SRV records as "target port"
	err   error
}

func newFake(answers ...fakeAnswer) *fakeResolver {
	return &fakeResolver{start: time.Now(), answers: answers}
}

func ips(addrs ...string) fakeAnswer { return fakeAnswer{addrs: addrs} }

func (f *fakeResolver) next(ctx context.Context, q string) (fakeAnswer, error) {
	f.mu.Lock()
	f.at = append(f.at, time.Since(f.start))
	f.asked = append(f.asked, q)
	a := f.answers[min(len(f.at), len(f.answers))-1]
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return a, ctx.Err()
		}
	}
	return a, a.err
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	a, err := f.next(ctx, network+" "+host)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, s := range a.addrs {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (f *fakeResolver) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	a, err := f.next(ctx, fmt.Sprintf("SRV %q %q %q", service, proto, name))
	if err != nil {
		return "", nil, err
	}
	var out []*net.SRV
	for _, s := range a.addrs {
		var target string
		var port uint16
		fmt.Sscanf(s, "%s %d", &target, &port)
		out = append(out, &net.SRV{Target: target, Port: port})
	}
	return name, out, nil
}

func (f *fakeResolver) lookups() ([]time.Duration, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.at), slices.Clone(f.asked)
}

// maker makes a service for an address: its name, and counts how many
// times each address was asked for.
type maker struct {
	mu   sync.Mutex
	made []string
	fail map[string]int // fail that many times for that address
}

func (m *maker) make(addr string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.made = append(m.made, addr)
	if m.fail[addr] > 0 {
		m.fail[addr]--
		return "", errors.New("connection refused")
	}
	return "svc(" + addr + ")", nil
}

// step is one Next: what it returned, and when, since the start.
type step struct {
	got string
	at  time.Duration
}

// nextN calls d.Next n times with ctx and records each result and its
// time.
func nextN(ctx context.Context, d discover.Discover[string, string], start time.Time, n int) []step {
	var out []step
	for range n {
		got := show(d.Next(ctx))
		out = append(out, step{got, time.Since(start)})
	}
	return out
}

func checkSteps(t *testing.T, got []step, want []step) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%v\nwant:\n%v", got, want)
	}
}

// A/AAAA lookups every second, diffed by key: inserts first, in sorted
// order, then removes; a failed lookup and an empty answer are reported
// and keep the last good set; an unchanged answer changes nothing, and
// Next waits for the next lookup.
func TestDNSRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(
			ips("10.0.0.2", "10.0.0.1"),
			ips("10.0.0.3", "10.0.0.2"),
			fakeAnswer{err: errors.New("server misbehaving")},
			ips(),
			ips("10.0.0.3", "2001:db8::1", "::ffff:10.0.0.4", "10.0.0.3"),
			ips("10.0.0.3", "2001:db8::1", "::ffff:10.0.0.4"),
		)
		m := &maker{}
		d := discover.NewDNS(r, "backend.internal", 8080, time.Second, m.make)
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 6500*time.Millisecond)
		defer cancel()
		s := func(got string, ms int) step { return step{got, time.Duration(ms) * time.Millisecond} }
		checkSteps(t, nextN(ctx, d, start, 10), []step{
			s("Insert 10.0.0.1:8080 svc(10.0.0.1:8080)", 0),
			s("Insert 10.0.0.2:8080 svc(10.0.0.2:8080)", 0),
			s("Insert 10.0.0.3:8080 svc(10.0.0.3:8080)", 1000),
			s("Remove 10.0.0.1:8080", 1000),
			s("error: discover: lookup backend.internal: server misbehaving", 2000),
			s("error: discover: lookup backend.internal: no addresses", 3000),
			s("Insert 10.0.0.4:8080 svc(10.0.0.4:8080)", 4000),
			s("Insert [2001:db8::1]:8080 svc([2001:db8::1]:8080)", 4000),
			s("Remove 10.0.0.2:8080", 4000),
			s("error: context deadline exceeded", 6500),
		})
		at, asked := r.lookups()
		if want := []time.Duration{0, 1 * time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("lookups at %v, want %v", at, want)
		}
		if asked[0] != "ip backend.internal" {
			t.Errorf("asked %q, want %q", asked[0], "ip backend.internal")
		}
		if want := "[10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080 10.0.0.4:8080 [2001:db8::1]:8080]"; fmt.Sprint(m.made) != want {
			t.Errorf("made services for %v, want %s, each once", m.made, want)
		}
	})
}

// The interval counts from the start of the previous lookup, however long
// the lookup took.
func TestDNSIntervalFromLookupStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(ips("10.0.0.1"), ips("10.0.0.2"), ips("10.0.0.3"))
		r.delay = 300 * time.Millisecond
		d := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make)
		start := time.Now()
		s := func(got string, ms int) step { return step{got, time.Duration(ms) * time.Millisecond} }
		checkSteps(t, nextN(t.Context(), d, start, 4), []step{
			s("Insert 10.0.0.1:80 svc(10.0.0.1:80)", 300),
			s("Insert 10.0.0.2:80 svc(10.0.0.2:80)", 1300),
			s("Remove 10.0.0.1:80", 1300),
			s("Insert 10.0.0.3:80 svc(10.0.0.3:80)", 2300),
		})
		if at, _ := r.lookups(); !slices.Equal(at, []time.Duration{0, time.Second, 2 * time.Second}) {
			t.Errorf("lookups at %v, want [0s 1s 2s]", at)
		}
	})
}

// When the service for an address cannot be made, that is reported, the
// address is left out, and it is tried again at the next lookup.
func TestDNSServiceErrorRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(ips("10.0.0.1", "10.0.0.2"))
		m := &maker{fail: map[string]int{"10.0.0.1:80": 1}}
		d := discover.NewDNS(r, "b", 80, time.Second, m.make)
		start := time.Now()
		s := func(got string, ms int) step { return step{got, time.Duration(ms) * time.Millisecond} }
		checkSteps(t, nextN(t.Context(), d, start, 3), []step{
			s("error: discover: making a service for 10.0.0.1:80: connection refused", 0),
			s("Insert 10.0.0.2:80 svc(10.0.0.2:80)", 0),
			s("Insert 10.0.0.1:80 svc(10.0.0.1:80)", 1000),
		})
		var se *discover.ServiceError
		m.fail["10.0.0.9:80"] = 1
		_, err := discover.NewDNS(newFake(ips("10.0.0.9")), "b", 80, time.Second, m.make).Next(t.Context())
		if !errors.As(err, &se) || se.Addr != "10.0.0.9:80" || se.Err.Error() != "connection refused" {
			t.Errorf("got %v, want a *ServiceError for 10.0.0.9:80", err)
		}
	})
}

// With a done context, Next returns what is queued, and does not look up.
func TestDNSDoneContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(ips("10.0.0.1", "10.0.0.2"))
		d := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make)
		if _, err := d.Next(doneCtx(t)); err != context.Canceled {
			t.Fatalf("before any lookup: got %v, want %v", err, context.Canceled)
		}
		if at, _ := r.lookups(); len(at) != 0 {
			t.Fatalf("a done context started %d lookups, want 0", len(at))
		}
		d.Next(t.Context()) // looks up, returns the first insert
		if got := show(d.Next(doneCtx(t))); got != "Insert 10.0.0.2:80 svc(10.0.0.2:80)" {
			t.Errorf("queued, with a done context: got %s", got)
		}
		if _, err := d.Next(doneCtx(t)); err != context.Canceled {
			t.Errorf("nothing queued: got %v, want %v", err, context.Canceled)
		}
	})
}

// A lookup cut short by the context is not a failure: Next returns the
// context's error, and the next Next looks up at once.
func TestDNSLookupCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(ips("10.0.0.1"))
		r.delay = time.Second
		d := discover.NewDNS(r, "b", 80, 10*time.Second, (&maker{}).make)
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if _, err := d.Next(ctx); err != context.DeadlineExceeded {
			t.Fatalf("got %v, want %v", err, context.DeadlineExceeded)
		}
		if got := show(d.Next(t.Context())); got != "Insert 10.0.0.1:80 svc(10.0.0.1:80)" {
			t.Errorf("got %s", got)
		}
		if got := time.Since(start); got != 1200*time.Millisecond {
			t.Errorf("second Next returned at %v, want 1.2s: it looked up at once", got)
		}
		if at, _ := r.lookups(); !slices.Equal(at, []time.Duration{0, 200 * time.Millisecond}) {
			t.Errorf("lookups at %v, want [0s 200ms]", at)
		}
	})
}

// SRV records give "target:port" keys, the target's final dot dropped.
func TestDNSSRV(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(fakeAnswer{addrs: []string{"b.example.com. 8080", "a.example.com. 8080", "a.example.com. 9090"}})
		d := discover.NewDNSSRV(r, "http", "tcp", "example.com", time.Minute, (&maker{}).make)
		start := time.Now()
		s := func(got string) step { return step{got, 0} }
		checkSteps(t, nextN(t.Context(), d, start, 3), []step{
			s("Insert a.example.com:8080 svc(a.example.com:8080)"),
			s("Insert a.example.com:9090 svc(a.example.com:9090)"),
			s("Insert b.example.com:8080 svc(b.example.com:8080)"),
		})
		if _, asked := r.lookups(); asked[0] != `SRV "http" "tcp" "example.com"` {
			t.Errorf("asked %s", asked[0])
		}
		r2 := newFake(fakeAnswer{err: errors.New("no such host")})
		_, err := discover.NewDNSSRV(r2, "http", "tcp", "example.com", time.Minute, (&maker{}).make).Next(t.Context())
		var le *discover.LookupError
		if !errors.As(err, &le) || err.Error() != "discover: lookup _http._tcp.example.com: no such host" {
			t.Errorf("got %v, want a *LookupError naming _http._tcp.example.com", err)
		}
		_, err = discover.NewDNSSRV(newFake(ips()), "", "", "srv.example.com", time.Minute, (&maker{}).make).Next(t.Context())
		if !errors.Is(err, discover.ErrNoAddresses) || err.Error() != "discover: lookup srv.example.com: no addresses" {
			t.Errorf("got %v, want ErrNoAddresses for srv.example.com", err)
		}
	})
}

func TestDNSBadInputPanics(t *testing.T) {
	mk := (&maker{}).make
	r := newFake(ips("10.0.0.1"))
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"EmptyHost", func() { discover.NewDNS(r, "", 80, time.Second, mk) }, "discover.NewDNS: host is empty"},
		{"PortZero", func() { discover.NewDNS(r, "h", 0, time.Second, mk) }, "discover.NewDNS: port must be between 1 and 65535, got 0"},
		{"PortTooBig", func() { discover.NewDNS(r, "h", 65536, time.Second, mk) }, "discover.NewDNS: port must be between 1 and 65535, got 65536"},
		{"ZeroInterval", func() { discover.NewDNS(r, "h", 80, 0, mk) }, "discover.NewDNS: interval must be positive, got 0s"},
		{"NegativeInterval", func() { discover.NewDNS(r, "h", 80, -time.Second, mk) }, "discover.NewDNS: interval must be positive, got -1s"},
		{"NilNewService", func() { discover.NewDNS[string](r, "h", 80, time.Second, nil) }, "discover.NewDNS: newService is nil"},
		{"SRVEmptyName", func() { discover.NewDNSSRV(r, "http", "tcp", "", time.Second, mk) }, "discover.NewDNSSRV: name is empty"},
		{"SRVZeroInterval", func() { discover.NewDNSSRV(r, "http", "tcp", "n", 0, mk) }, "discover.NewDNSSRV: interval must be positive, got 0s"},
		{"SRVNilNewService", func() { discover.NewDNSSRV[string](r, "http", "tcp", "n", time.Second, nil) }, "discover.NewDNSSRV: newService is nil"},
		{"ListNil", func() { discover.NewList[any]("a", nil) }, "discover.NewList: service 1 is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}
