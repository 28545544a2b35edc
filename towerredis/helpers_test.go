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
	n, errs atomic.Int64
	mu      sync.Mutex
	last    error
}

func (c *trips) observe(rt RoundTrip) {
	c.n.Add(1)
	if rt.Err != nil {
		c.errs.Add(1)
		c.mu.Lock()
		c.last = rt.Err
		c.mu.Unlock()
	}
}

func (c *trips) lastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// ok is the inner service of the tests: it answers "ok".
var okService = tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return "ok", nil })

// counting is a service that counts its calls and its outstanding
// permits, to check that a limit gives back what it holds.
type counting struct {
	calls, outstanding atomic.Int64
}

func (c *counting) Ready(context.Context) (tower.Permit[string, string], error) {
	c.outstanding.Add(1)
	return tower.NewPermit[string, string](c, 0), nil
}

func (c *counting) CallReserved(context.Context, uint64, string) (string, error) {
	c.outstanding.Add(-1)
	c.calls.Add(1)
	return "ok", nil
}

func (c *counting) ReleaseReserved(uint64) { c.outstanding.Add(-1) }

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
