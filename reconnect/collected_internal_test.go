package reconnect

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
)

// The cleanup of a Reconnect the garbage collector found unreachable,
// called directly: it closes a Reconnect that was open, leaves a failure
// that was final as it was, cancels a connect under way, and reports
// whether it stopped one (so that only then is a warning logged).
func TestCollected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		maker := MakeFunc[string, string, string](func(ctx context.Context, _ string) (tower.Service[string, string], error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})

		idle := New(maker, "idle")
		if idle.c.collected() {
			t.Error("collected with no connect under way: got true, want false")
		}
		if idle.c.err != ErrClosed {
			t.Errorf("after collected: err %v, want ErrClosed", idle.c.err)
		}
		if idle.c.collected() {
			t.Error("collected a second time: got true, want false")
		}

		final := errors.New("the maker failed for good")
		failed := New(maker, "failed")
		failed.c.err = final
		if failed.c.collected() {
			t.Error("collected of a failed Reconnect with no connect: got true, want false")
		}
		if failed.c.err != final {
			t.Errorf("after collected: err %v, want the final failure kept", failed.c.err)
		}

		connecting := New(maker, "connecting")
		if _, ok, err := tower.ReadyNow[string, string](connecting); ok || err != nil {
			t.Fatalf("ReadyNow: got %v, %v; want a connect under way", ok, err)
		}
		<-started
		if !connecting.c.collected() {
			t.Error("collected with a connect under way: got false, want true")
		}
		synctest.Wait() // the connect, cancelled, has returned
		for _, r := range []*Reconnect[string, string, string]{idle, failed, connecting} {
			r.Close()
		}
	})
}
