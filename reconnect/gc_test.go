package reconnect_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
)

// This test watches the garbage collector, so it runs on the real clock,
// outside synctest: a cleanup runs outside every bubble, where it may not
// touch what the bubble made.

// startAndDrop starts a connect on a Reconnect that nothing references
// afterwards, and returns a channel closed when the connect's ctx ends.
func startAndDrop(t *testing.T) <-chan struct{} {
	cancelled := make(chan struct{})
	started := make(chan struct{})
	maker := reconnect.MakeFunc[string, string, string](func(ctx context.Context, _ string) (tower.Service[string, string], error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	r := reconnect.New(maker, target)
	if _, ok, err := tower.ReadyNow[string, string](r); ok || err != nil {
		t.Fatalf("ReadyNow: got %v, %v; want not ready", ok, err)
	}
	<-started
	return cancelled
}

// A Reconnect that becomes unreachable while a connect hangs has that
// connect cancelled, so its goroutine ends.
func TestUnreachableReconnectCancelsConnect(t *testing.T) {
	cancelled := startAndDrop(t)
	for range 200 {
		runtime.GC()
		select {
		case <-cancelled:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the connect of an unreachable Reconnect was not cancelled after 200 collections")
}
