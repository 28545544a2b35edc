package readycache_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/readycache"
	"github.com/towergo/tower/towertest"
)

type (
	mock   = towertest.Mock[string, string]
	handle = towertest.Handle[string, string]
	cache  = readycache.Cache[int, string, string, *mock]
)

// failures collects what the cache reports.
type failures struct {
	mu   sync.Mutex
	list []string
}

func (f *failures) add(x *readycache.Failed[int]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, fmt.Sprintf("%d: %v", x.Key, x.Err))
}

func (f *failures) check(t *testing.T, want ...string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.list) != fmt.Sprint(want) {
		t.Errorf("got failures %q, want %q", f.list, want)
	}
}

// newCache returns a cache that reports its failures, closed when t ends.
func newCache(t *testing.T) (*cache, *failures) {
	f := &failures{}
	c := readycache.New[int, string, string, *mock](readycache.WithFailureHandler(f.add))
	t.Cleanup(func() { c.Close() })
	return c, f
}

// newMock returns a mock that grants n reservations (-1: any number).
func newMock(n int) (*mock, *handle) {
	m, h := towertest.NewMock[string, string]()
	if n >= 0 {
		h.Allow(n)
	}
	return m, h
}

// checkLens fails t unless c has ready ready endpoints and pending pending.
func checkLens(t *testing.T, c *cache, ready, pending int) {
	t.Helper()
	synctest.Wait()
	if got := c.ReadyLen(); got != ready {
		t.Errorf("got ReadyLen() = %d, want %d", got, ready)
	}
	if got := c.PendingLen(); got != pending {
		t.Errorf("got PendingLen() = %d, want %d", got, pending)
	}
	if got := c.Len(); got != ready+pending {
		t.Errorf("got Len() = %d, want %d", got, ready+pending)
	}
}

// pickAt always picks index i.
type pickAt int

func (i pickAt) Pick([]*mock) int { return int(i) }
