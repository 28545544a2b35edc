package spawnready_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// This test watches the garbage collector, so it runs on the real clock,
// outside synctest: a cleanup runs outside every bubble, where it may not
// touch what the bubble made.

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
// stopped, so its goroutine ends, and a warning says it was not closed.
func TestUnreachableSpawnReadyStopsDrive(t *testing.T) {
	log := towertest.CaptureLog(t)
	inner := never{started: make(chan struct{}), cancelled: make(chan struct{})}
	startAndDrop(t, inner)
	const warning = `level=WARN msg="tower: a spawnready.SpawnReady became unreachable without Close; stopped it"`
	for range 200 {
		runtime.GC()
		select {
		case <-inner.cancelled:
			for range 200 { // the warning follows the stop
				if strings.Contains(log.String(), warning) {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Fatalf("the drive was stopped with no warning; the log:\n%s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the drive of an unreachable SpawnReady was not stopped after 200 collections")
}
