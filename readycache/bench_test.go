package readycache_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
)

var sink int

// rotate takes the ready endpoints in turn.
type rotate struct{ next int }

func (r *rotate) Pick(ready []tower.Service[int, int]) int {
	i := r.next % len(ready)
	r.next++
	return i
}

// BenchmarkTakeCall is one request through the cache: take a ready
// endpoint's permit (which asks it for the next one), call it, use the
// response.
func BenchmarkTakeCall(b *testing.B) {
	echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
	for _, n := range []int{2, 10, 100} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := readycache.New[int, int, int, tower.Service[int, int]]()
			defer c.Close()
			for i := range n {
				c.Push(i, echo)
			}
			pick := &rotate{}
			ctx := b.Context()
			b.ReportAllocs()
			s := 0
			for b.Loop() {
				_, p, ok := c.TryTake(pick)
				if !ok {
					b.Fatal("no endpoint ready")
				}
				res, err := p.Call(ctx, 1)
				if err != nil {
					b.Fatal(err)
				}
				s += res
			}
			sink += s
		})
	}
}
