package readycache

import (
	"context"
	"testing"

	"github.com/towergo/tower"
)

// A key of an interface type that holds a value that cannot be hashed (a
// slice) panics as Evict looks it up: the panic goes on up to the caller,
// with the cache's lock released, and the cache serves on.
func TestEvictUnhashableKeyReleasesLock(t *testing.T) {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	c := New[any, string, string, tower.Service[string, string]]()
	c.Push("a", echo)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Evict of an unhashable key did not panic")
			}
		}()
		c.Evict([]int{1})
	}()
	if !c.mu.TryLock() {
		t.Fatal("the cache's lock is still held after the panic")
	}
	c.mu.Unlock()
	if !c.Evict("a") {
		t.Error(`Evict("a"): got false, want the endpoint evicted`)
	}
	c.Close()
}
