package towertest_test

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/towertest"
)

func TestOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		boom := errors.New("boom")
		o := towertest.Go(func() (int, error) {
			<-release
			return 7, boom
		})
		synctest.Wait()
		if o.Done() {
			t.Fatal("Done() = true before f returned")
		}
		close(release)
		if v, err := o.Wait(); v != 7 || err != boom {
			t.Errorf("Wait() = %v, %v; want 7, %v", v, err, boom)
		}
		if !o.Done() {
			t.Error("Done() = false after Wait")
		}
	})
}
