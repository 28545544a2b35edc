package towerredis

// In-package: helpers of the in-package tests; isRefusal reads the refusal type.

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
)

// newClient returns a go-redis client of addr, with deadlines honoured,
// closed when t ends.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr: addr, ContextTimeoutEnabled: true, Protocol: 2,
		MaxRetries: -1, // a round trip is one try: the limit decides what to do next
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// trips counts round trips and their errors, through WithObserver.
type trips struct {
	N, Errs atomic.Int64
	mu      sync.Mutex
	last    error
}

// Observe is the observer to pass to WithObserver.
func (c *trips) Observe(rt RoundTrip) {
	c.N.Add(1)
	if rt.Err != nil {
		c.Errs.Add(1)
		c.mu.Lock()
		c.last = rt.Err
		c.mu.Unlock()
	}
}

// LastErr returns the last error observed.
func (c *trips) LastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// okService is the inner service of the tests: it answers "ok".
var okService = tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return "ok", nil })

// counting is a service that counts its calls and its outstanding
// permits, to check that a limit gives back what it holds.
type counting struct {
	Calls, Outstanding atomic.Int64
}

func (c *counting) Ready(context.Context) (tower.Permit[string, string], error) {
	c.Outstanding.Add(1)
	return tower.NewPermit[string, string](c, 0), nil
}

func (c *counting) CallReserved(context.Context, uint64, string) (string, error) {
	c.Outstanding.Add(-1)
	c.Calls.Add(1)
	return "ok", nil
}

func (c *counting) ReleaseReserved(uint64) { c.Outstanding.Add(-1) }

// blackHole listens on a loopback port, accepts connections and never
// answers, as a Redis that hangs does; it closes when t ends.
func blackHole(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// within fails t unless d is in [lo, hi].
func within(t testing.TB, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Errorf("%s took %v, want between %v and %v", what, d, lo, hi)
	}
}

// refused checks that p is the permit of a limit failing closed with Redis
// unreachable: its Call fails with an *UnreachableError of the limit named
// name, wrapping the round trip's error, which answers IsOverloaded and
// neither IsThrottled nor IsTimeout.
func refused(t testing.TB, p tower.Permit[string, string], name string) {
	t.Helper()
	_, err := p.Call(t.Context(), "x")
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.Name != name || ue.Err == nil || !errors.Is(err, ErrUnreachable) ||
		!tower.IsOverloaded(err) || tower.IsThrottled(err) || tower.IsTimeout(err) {
		t.Errorf("Call = %v, want an UnreachableError of limit %q with the round trip's error, overloaded, neither throttled nor timed out", err, name)
	}
}

// isRefusal reports whether p holds the permit that a limit failing
// closed hands out with Redis unreachable, and leaves p as it was.
func isRefusal(p *tower.Permit[string, string]) bool {
	r, token := p.Split()
	*p = tower.NewPermit(r, token)
	_, ok := r.(*refusal[string, string])
	return ok
}

// leaseClient returns a client of the server at addr, closed when t ends.
func leaseClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// leasePatient bounds round trips by half a second, for tests whose
// leases live long and whose every round trip must succeed, even on a busy
// machine.
var leasePatient = WithTimeout(500 * time.Millisecond)

// leaseEcho is an inner service that answers its request.
var leaseEcho = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })

// leaseCard returns how many leases the limit named name holds in Redis.
func leaseCard(t testing.TB, c *redis.Client, name string) int64 {
	t.Helper()
	n, err := c.ZCard(context.Background(), "{"+DefaultPrefix+":lease:"+name+"}").Result()
	if err != nil {
		t.Fatalf("ZCARD: %v", err)
	}
	return n
}

// leaseReadyNow asks svc for a permit with a done ctx, and reports whether
// it got one that holds a lease or was admitted (not one that refuses).
func leaseReadyNow(t testing.TB, svc tower.Service[string, string]) (tower.Permit[string, string], bool) {
	t.Helper()
	p, ok, err := tower.ReadyNow(svc)
	if err != nil {
		t.Fatalf("ReadyNow: %v", err)
	}
	if ok && isRefusal(&p) {
		// The limit fails closed and Redis did not answer within the
		// timeout (a busy machine): no lease was granted.
		p.Release()
		return tower.Permit[string, string]{}, false
	}
	return p, ok
}

// doneCtx returns a context already cancelled.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// mustReady returns svc's permit, and fails t if Ready fails.
func mustReady(t *testing.T, ctx context.Context, svc tower.Service[string, string]) tower.Permit[string, string] {
	t.Helper()
	p, err := svc.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return p
}
