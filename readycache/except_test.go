package readycache_test

import (
	"testing"
	"testing/synctest"
)

// lastOf picks the last of the endpoints it is given, and counts how many
// it was given each time.
type lastOf struct{ given []int }

func (l *lastOf) Pick(ready []*mock) int {
	l.given = append(l.given, len(ready))
	return len(ready) - 1
}

// TryTakeExcept takes an excepted endpoint only when no other is ready:
// pick is asked again among the others, in the cache's order.
func TestTryTakeExcept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		for k := range 3 {
			m, _ := newMock(-1)
			c.Push(k, m)
		}
		checkLens(t, c, 3, 0)
		pick := &lastOf{}
		tried := map[int]bool{2: true}
		k, p, ok := c.TryTakeExcept(pick, func(k int) bool { return tried[k] })
		if !ok || k != 1 || len(pick.given) != 2 || pick.given[1] != 2 {
			t.Fatalf("2 excepted: took %d (ok %v), pick given %v; want 1, the last of [0 1]", k, ok, pick.given)
		}
		p.Release()

		tried = map[int]bool{0: true, 1: true, 2: true}
		if k, p, ok := c.TryTakeExcept(&lastOf{}, func(k int) bool { return tried[k] }); !ok || k != 2 {
			t.Fatalf("all excepted: took %d (ok %v), want 2, pick's first choice", k, ok)
		} else {
			p.Release()
		}
		pick = &lastOf{}
		if k, p, ok := c.TryTakeExcept(pick, func(k int) bool { return k == 0 }); !ok || k != 2 || len(pick.given) != 1 {
			t.Fatalf("another excepted: took %d (ok %v), pick given %v; want 2, picked once", k, ok, pick.given)
		} else {
			p.Release()
		}
		if k, p, ok := c.TryTakeExcept(&lastOf{}, nil); !ok || k != 2 {
			t.Fatalf("nil except: took %d (ok %v), want 2", k, ok)
		} else {
			p.Release()
		}
	})
}
