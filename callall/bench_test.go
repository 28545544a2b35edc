package callall_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/callall"
)

var sink int

// echo answers at once with its request: the benchmarks measure the cost
// per request of a call-all over it.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// batch is the number of requests in one run: ns/op and allocs/op are per
// run, and ns/req and allocs/req per request.
const batch = 1024

func requests(yield func(int) bool) {
	for i := range batch {
		if !yield(i) {
			return
		}
	}
}

func BenchmarkCallAll(b *testing.B) {
	kinds := []struct {
		name string
		all  func(context.Context, tower.Service[int, int], iter.Seq[int], int) iter.Seq2[int, error]
	}{
		{"Ordered", callall.Ordered[int, int]},
		{"Unordered", callall.Unordered[int, int]},
	}
	for _, k := range kinds {
		for _, limit := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/limit=%d", k.name, limit), func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					n := 0
					for res, err := range k.all(ctx, echo, requests, limit) {
						if err != nil {
							b.Fatal(err)
						}
						n += res
					}
					sink += n
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/req")
			})
		}
	}
}

// The same requests sent one after the other with tower.Call, for
// comparison: no overlap, no goroutine.
func BenchmarkSequentialCalls(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for req := range requests {
			res, err := tower.Call[int, int](ctx, echo, req)
			if err != nil {
				b.Fatal(err)
			}
			n += res
		}
		sink += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/req")
}
