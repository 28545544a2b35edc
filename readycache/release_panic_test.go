package readycache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
	"github.com/towergo/tower/towertest"
)

// releasePanics is an endpoint always ready, whose reservations' Release
// panics.
type releasePanics struct{}

func (releasePanics) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.NewPermit[string, string](releasePanics{}, 0), nil
}

func (releasePanics) CallReserved(_ context.Context, _ uint64, req string) (string, error) {
	return req, nil
}

func (releasePanics) ReleaseReserved(uint64) { panic("release exploded") }

// An endpoint whose reservation's Release panics as the cache removes it
// on a caller's goroutine is still handed to the removal handler, which
// may be all that closes it, before the panic goes on up to the caller:
// at Evict, and at Close, which hands over every endpoint.
func TestReleasePanicStillTellsRemovalHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		removed := map[int]int{}
		c := readycache.New[int, string, string, tower.Service[string, string]](
			readycache.WithRemovalHandler(func(k int, _ tower.Service[string, string]) {
				mu.Lock()
				defer mu.Unlock()
				removed[k]++
			}))
		for i := range 3 {
			c.Push(i, releasePanics{})
		}
		towertest.Panics(t, "release exploded", func() { c.Evict(0) })
		if n := c.Len(); n != 2 {
			t.Errorf("after Evict: %d endpoints, want 2", n)
		}
		towertest.Panics(t, "release exploded", func() { c.Close() })
		mu.Lock()
		defer mu.Unlock()
		if got, want := fmt.Sprint(removed), "map[0:1 1:1 2:1]"; got != want {
			t.Errorf("got removals %s, want each endpoint once: %s", got, want)
		}
	})
}
