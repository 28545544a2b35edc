package spawnready_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
)

// This test watches the garbage collector, so it runs on the real clock,
// outside synctest: inside a bubble no cleanup is registered
// (internal/lifetime).

// never is a service that is never ready; its Ready closes cancelled when
// a wait that could have lasted ends.
type never struct {
	started, cancelled chan struct{}
}

func (n never) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() == nil {
		close(n.started)
		<-ctx.Done()
		close(n.cancelled)
	}
	return tower.Permit[string, string]{}, ctx.Err()
}

// startAndDrop starts a drive on a SpawnReady that nothing references
// afterwards.
func startAndDrop(t *testing.T, inner never) {
	s := spawnready.New[string, string](inner)
	if _, ok, err := tower.ReadyNow[string, string](s); ok || err != nil {
		t.Fatalf("ReadyNow: got %v, %v; want not ready", ok, err)
	}
	<-inner.started
}

// A SpawnReady that becomes unreachable while a drive waits has that drive
// stopped, so its goroutine ends.
func TestUnreachableSpawnReadyStopsDrive(t *testing.T) {
	inner := never{started: make(chan struct{}), cancelled: make(chan struct{})}
	startAndDrop(t, inner)
	for range 200 {
		runtime.GC()
		select {
		case <-inner.cancelled:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the drive of an unreachable SpawnReady was not stopped after 200 collections")
}
