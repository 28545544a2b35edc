package buffer_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
)

// An idle Buffer holds the same few KiB of heap whatever its
// bound; the queue takes memory only as requests are queued. The figure is
// logged (run with -v) and stated in the Buffer's doc. Before the fix, a
// Buffer(1<<20) held 32 MiB from New on, and New with the largest bound
// asked for 128 GiB.
func TestIdleBufferMemory(t *testing.T) {
	const n = 20
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	for _, bound := range []int{1, 1 << 20, maxBound} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			bufs := make([]*buffer.Buffer[string, string], n)
			h0, _ := heapAndStack()
			for i := range bufs {
				bufs[i] = buffer.New[string, string](echo, bound)
			}
			h1, _ := heapAndStack()
			runtime.KeepAlive(bufs)
			per := (h1 - h0) / n
			t.Logf("an idle Buffer(%d) holds %d B of heap", bound, per)
			if per > 4<<10 {
				t.Errorf("an idle Buffer(%d) holds %d B of heap, want at most 4 KiB", bound, per)
			}
			for _, b := range bufs {
				b.Close()
			}
		})
	}
}
