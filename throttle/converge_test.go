package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/throttle"
)

// capped is a backend that accepts at most perSecond requests in each
// second of the clock, and refuses the rest with loadshed.ErrOverloaded:
// a backend with a fixed capacity, offered more.
type capped struct {
	perSecond       int
	second          int64
	taken           int
	sent, accepted  int
	measuring       bool
	mSent, mAccepts int
	start           time.Time
}

func (c *capped) call(context.Context, int) (int, error) {
	if s := int64(time.Since(c.start) / time.Second); s != c.second {
		c.second, c.taken = s, 0
	}
	c.sent++
	if c.measuring {
		c.mSent++
	}
	if c.taken == c.perSecond {
		return 0, loadshed.ErrOverloaded
	}
	c.taken++
	c.accepted++
	if c.measuring {
		c.mAccepts++
	}
	return 0, nil
}

// The book's behaviour: a client offered 200 requests/s, to a backend
// that takes 20/s, ends up sending it K times what it accepts (40/s with
// K = 2, 60/s with K = 3), rejecting the rest itself; the backend refuses
// about (K−1) requests for each it serves, instead of 9. (The rejection
// probability settles at 1 − K·20/200: 0.8 for K = 2, 0.7 for K = 3,
// below the cap.) Measured over the
// last two minutes of six, with a fixed seed, under virtual time: the
// ratio of sent to accepted is within 2% of K, and the backend serves its
// 20/s.
func TestConvergesToKTimesAccepts(t *testing.T) {
	for _, k := range []float64{2, 3} {
		t.Run(fmt.Sprintf("K=%v", k), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &capped{perSecond: 20, second: -1, start: time.Now()}
				svc := throttle.New[int, int](tower.ServiceFunc[int, int](b.call), throttle.NotOverloaded,
					throttle.WithK(k), throttle.WithRand(rand.New(rand.NewPCG(1, 2))))
				const every = 5 * time.Millisecond // 200 requests/s
				var offered, rejected int
				for i := 0; time.Since(b.start) < 6*time.Minute; i++ {
					if time.Since(b.start) >= 4*time.Minute {
						b.measuring = true
						offered++
					}
					_, err := tower.Call(t.Context(), svc, i)
					if b.measuring && errors.Is(err, throttle.ErrThrottled) {
						rejected++
					}
					time.Sleep(every)
				}
				ratio := float64(b.mSent) / float64(b.mAccepts)
				t.Logf("last 2 minutes: %d offered, %d rejected locally, %d sent, %d accepted: sent/accepted %.3f",
					offered, rejected, b.mSent, b.mAccepts, ratio)
				if math.Abs(ratio-k)/k > 0.02 {
					t.Errorf("sent/accepted: got %.3f, want %v within 2%%", ratio, k)
				}
				if want := 20 * 120; b.mAccepts != want {
					t.Errorf("accepted: got %d, want %d (the backend's capacity)", b.mAccepts, want)
				}
				if offered != rejected+b.mSent {
					t.Errorf("%d offered, want %d rejected + %d sent", offered, rejected, b.mSent)
				}
			})
		})
	}
}
