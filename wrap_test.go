package tower_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// counting is a middleware built on a WrapPool that counts what its permits
// do.
type counting struct {
	inner             tower.Service[string, string]
	wraps             tower.WrapPool[string, string]
	calls, releases   atomic.Int64
	lastInnerReleased atomic.Bool
}

func (c *counting) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	p, err := c.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return c.wraps.Wrap(c, p), nil
}

func (c *counting) CallWrapped(ctx context.Context, inner tower.Permit[string, string], req string) (string, error) {
	c.calls.Add(1)
	return inner.Call(ctx, req+"!")
}

func (c *counting) ReleaseWrapped(inner tower.Permit[string, string]) {
	c.releases.Add(1)
	inner.Release()
	c.lastInnerReleased.Store(!inner.Held())
}

func newCounting() *counting {
	return &counting{inner: tower.ServiceFunc[string, string](echo)}
}

func TestWrapPoolCall(t *testing.T) {
	c := newCounting()
	p, _ := c.Ready(t.Context())
	got, err := p.Call(t.Context(), "hello")
	if got != "hello!" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", got, err, "hello!")
	}
	p.Release()
	if n, m := c.calls.Load(), c.releases.Load(); n != 1 || m != 0 {
		t.Errorf("got %d calls and %d releases, want 1 and 0", n, m)
	}
}

func TestWrapPoolRelease(t *testing.T) {
	c := newCounting()
	p, _ := c.Ready(t.Context())
	p.Release()
	p.Release()
	if n, m := c.calls.Load(), c.releases.Load(); n != 0 || m != 1 {
		t.Errorf("got %d calls and %d releases, want 0 and 1", n, m)
	}
	if !c.lastInnerReleased.Load() {
		t.Error("the inner permit was not released")
	}
}

// A record goes back to the pool when its permit is used; a stale copy of
// that permit must not reach the record's next owner.
func TestWrapPoolStaleCopyAfterReuse(t *testing.T) {
	c := newCounting()
	p1, _ := c.Ready(t.Context())
	stale := p1
	p1.Release()
	// The next permit may well reuse p1's record.
	p2, _ := c.Ready(t.Context())
	stale.Release() // must not release p2
	if m := c.releases.Load(); m != 1 {
		t.Errorf("got %d releases, want 1: a stale copy released the record's next owner", m)
	}
	mustPanic(t, func() { stale.Call(t.Context(), "hello") })
	if got, err := p2.Call(t.Context(), "hello"); got != "hello!" || err != nil {
		t.Errorf("p2: got %q, %v; want %q, nil", got, err, "hello!")
	}
	if n := c.calls.Load(); n != 1 {
		t.Errorf("got %d calls, want 1", n)
	}
}

func TestWrapPoolConcurrent(t *testing.T) {
	c := newCounting()
	const goroutines, rounds = 8, 1000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				p, _ := c.Ready(t.Context())
				if (g+i)%2 == 0 {
					p.Release()
					continue
				}
				copy := p
				if got, _ := p.Call(t.Context(), "x"); got != "x!" {
					t.Errorf("got %q, want %q", got, "x!")
				}
				copy.Release() // stale: does nothing
			}
		})
	}
	wg.Wait()
	if n, m := c.calls.Load(), c.releases.Load(); n+m != goroutines*rounds || n != m {
		t.Errorf("got %d calls and %d releases, want %d of each", n, m, goroutines*rounds/2)
	}
}

func TestWrapPoolDoesNotAllocate(t *testing.T) {
	c := newCounting()
	svc := tower.Service[string, string](c)
	ctx := t.Context()
	allocs := testing.AllocsPerRun(1000, func() {
		p, _ := svc.Ready(ctx)
		p.Call(ctx, "hello")
	})
	// "hello"+"!" allocates the response; the permit machinery must not.
	if allocs > 1 {
		t.Errorf("Ready + Call through a WrapPool: %v allocations, want at most the 1 of the handler", allocs)
	}
}

func mustPanic(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Error("did not panic")
		}
	}()
	f()
}

func BenchmarkWrapPool(b *testing.B) {
	var w passThrough
	w.inner = tower.ServiceFunc[string, string](echo)
	towertest.Bench(b, tower.Service[string, string](&w), "hello")
}

// passThrough is the smallest WrapPool middleware, to measure the pool.
type passThrough struct {
	inner tower.Service[string, string]
	wraps tower.WrapPool[string, string]
}

func (w *passThrough) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	p, err := w.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return w.wraps.Wrap(w, p), nil
}

func (w *passThrough) CallWrapped(ctx context.Context, inner tower.Permit[string, string], req string) (string, error) {
	return inner.Call(ctx, req)
}

func (w *passThrough) ReleaseWrapped(inner tower.Permit[string, string]) { inner.Release() }

// Split moves the reservation out of the variable; NewPermit puts the parts
// back together, and the Reserver still refuses the stale copy.
func TestPermitSplit(t *testing.T) {
	c := newCounting()
	p, _ := c.Ready(t.Context())
	stale := p
	r, token := p.Split()
	if p.Held() || r == nil {
		t.Fatalf("after Split: held=%v, reserver=%v; want an empty permit and a Reserver", p.Held(), r)
	}
	if r2, _ := p.Split(); r2 != nil {
		t.Errorf("Split of an empty permit: got Reserver %v, want nil", r2)
	}
	q := tower.NewPermit(r, token)
	if got, err := q.Call(t.Context(), "hello"); got != "hello!" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", got, err, "hello!")
	}
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.HasPrefix(msg, "tower:") {
			t.Errorf("stale copy after Split: got panic %q, want one starting tower:", msg)
		}
	}()
	stale.Call(t.Context(), "again")
}

// numbered is a middleware built on a WrapPool's noted permits: each
// permit carries the number of the Ready that issued it, and what was
// done with each number is recorded.
type numbered struct {
	inner tower.Service[string, string]
	wraps tower.WrapPool[string, string]
	next  atomic.Uint64
	mu    sync.Mutex
	log   []string
}

func (n *numbered) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	p, err := n.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return n.wraps.WrapNoted(n, p, n.next.Add(1)), nil
}

func (n *numbered) CallNoted(ctx context.Context, inner tower.Permit[string, string], note uint64, req string) (string, error) {
	n.record(fmt.Sprint("call ", note))
	return inner.Call(ctx, req)
}

func (n *numbered) ReleaseNoted(inner tower.Permit[string, string], note uint64) {
	n.record(fmt.Sprint("release ", note))
	inner.Release()
}

func (n *numbered) record(s string) {
	n.mu.Lock()
	n.log = append(n.log, s)
	n.mu.Unlock()
}

// Each noted permit hands its own note back, called or released, even
// from a record reused after another permit's; a plain permit from the
// same pool, on a reused record, is served as a plain one; stale copies
// do nothing.
func TestWrapPoolNoted(t *testing.T) {
	n := &numbered{inner: tower.ServiceFunc[string, string](echo)}
	ctx := t.Context()
	p1, _ := n.Ready(ctx)
	p2, _ := n.Ready(ctx)
	stale := p1
	p2.Release()
	if got, err := p1.Call(ctx, "x"); got != "x" || err != nil {
		t.Fatalf("Call: %q, %v", got, err)
	}
	stale.Release()
	mustPanic(t, func() { stale.Call(ctx, "x") })
	p3, _ := n.Ready(ctx) // a reused record
	p3.Release()
	c := &counting{inner: n}
	p4, _ := c.Ready(ctx) // n's noted permit wrapped in c's plain one
	p4.Call(ctx, "y")
	want := []string{"release 2", "call 1", "release 3", "call 4"}
	if !slices.Equal(n.log, want) {
		t.Errorf("got %q, want %q", n.log, want)
	}
	if c.calls.Load() != 1 {
		t.Errorf("the plain permit's CallWrapped ran %d times, want 1", c.calls.Load())
	}
}
