package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
)

const ms = time.Millisecond

// Requests to backend: ok succeeds, bad fails with errBoom.
const (
	ok  = 1
	bad = -1
)

var errBoom = errors.New("boom")

// backend answers a request with itself, or fails with errBoom for a
// negative one.
var backend = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) {
	if req < 0 {
		return 0, errBoom
	}
	return req, nil
})

// newBreaker returns a breaker over backend that counts errors, with no
// jitter and a first open delay of 1s (doubling up to 8s), then opts.
func newBreaker(opts ...breaker.Option) *breaker.Breaker[int, int] {
	base := []breaker.Option{breaker.WithJitter(0), breaker.WithOpenDelay(time.Second, 8*time.Second)}
	return breaker.New(backend, breaker.AnyError, append(base, opts...)...)
}

// send sends req through b, which must be ready now, and returns the
// call's error.
func send(t *testing.T, b tower.Service[int, int], req int) error {
	t.Helper()
	p, ok, err := tower.ReadyNow(b)
	if err != nil || !ok {
		t.Fatalf("ReadyNow: got %t, %v; want a permit", ok, err)
	}
	_, err = p.Call(t.Context(), req)
	return err
}

// sendN sends req through b n times.
func sendN(t *testing.T, b tower.Service[int, int], req, n int) {
	t.Helper()
	for range n {
		send(t, b, req)
	}
}

// expectState fails t unless b is in state want.
func expectState(t *testing.T, b *breaker.Breaker[int, int], want breaker.State) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("state %v, want %v", got, want)
	}
}

// expectNotReady fails t unless b is not ready now.
func expectNotReady(t *testing.T, b tower.Service[int, int]) {
	t.Helper()
	p, ok, err := tower.ReadyNow(b)
	if err != nil || ok {
		p.Release()
		t.Fatalf("ReadyNow: got %t, %v; want not ready", ok, err)
	}
}

// readyNow returns a permit of b, which must be ready now.
func readyNow(t *testing.T, b tower.Service[int, int]) tower.Permit[int, int] {
	t.Helper()
	p, ok, err := tower.ReadyNow(b)
	if err != nil || !ok {
		t.Fatalf("ReadyNow: got %t, %v; want a permit", ok, err)
	}
	return p
}

// openFor returns how long b, open now, makes a Ready wait, and the
// permit that Ready got.
func openFor(t *testing.T, b tower.Service[int, int]) (time.Duration, tower.Permit[int, int]) {
	t.Helper()
	start := time.Now()
	p, err := b.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return time.Since(start), p
}

// changes records the changes a breaker tells its callback.
type changes struct {
	mu   sync.Mutex
	seen []string
}

func (c *changes) record(from, to breaker.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, fmt.Sprintf("%v>%v", from, to))
}

func (c *changes) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.seen, " ")
}

// budget is a retry.Budget that grants as many withdrawals as it holds.
type budget struct {
	mu        sync.Mutex
	left      int
	withdrawn int
	deposits  int
}

func (b *budget) Deposit() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deposits++
}

func (b *budget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left == 0 {
		return false
	}
	b.left--
	b.withdrawn++
	return true
}

func (b *budget) set(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left = n
}

// mustPanic fails t unless f panics with a message that contains want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("no panic, want one with %q", want)
			return
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Errorf("panicked with %q, want %q", msg, want)
		}
	}()
	f()
}
