package callall_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/towergo/tower/callall"
	"github.com/towergo/tower/towertest"
)

// The limit at its extremes: below 1 is refused with a clear panic, in
// every variant; a limit beyond what a machine can have out at once
// (math.MaxInt64) counts as MaxLimit, and every request goes out at once.
func TestLimitExtremes(t *testing.T) {
	for _, limit := range []int{0, math.MinInt64} {
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/%d", v.name, limit), func(t *testing.T) {
				mock, _ := towertest.NewMock[string, string]()
				want := fmt.Sprintf("callall.%s: limit must be at least 1, got %d", v.name, limit)
				towertest.Panics(t, want, func() { v.all(context.Background(), mock, make(chan string), limit) })
			})
		}
	}
	for _, limit := range []int{math.MaxInt64, callall.MaxLimit + 1, callall.MaxLimit} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			forEach(t, func(t *testing.T, v variant) {
				mock, h := towertest.NewMock[string, string]()
				reqs := make(chan string, 3)
				for _, r := range []string{"a", "b", "c"} {
					reqs <- r
				}
				close(reqs)
				c := collect(v.all(t.Context(), mock, reqs, limit), time.Now())
				got := received(t, h, 3)
				for _, r := range []string{"a", "b", "c"} {
					got[r].Respond(r)
				}
				var res []string
				for range 3 {
					res = append(res, c.next(t).res)
				}
				if !v.ordered {
					slices.Sort(res)
				}
				if want := []string{"a", "b", "c"}; !slices.Equal(res, want) {
					t.Errorf("got %q, want %q", res, want)
				}
				c.ended(t, 0)
			})
		})
	}
}
