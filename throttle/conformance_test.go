package throttle_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/throttle"
	"github.com/towergo/tower/towertest"
)

func TestConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] { return throttle.NewLayer[string, string](throttle.NotOverloaded) },
		Request:  "hello",
		Response: "world",
	}.Run(t)
}

// Each service the layer wraps has a Throttle, and a window, of its own:
// refusals from one backend do not throttle the other.
func TestLayerThrottlesEachApart(t *testing.T) {
	l := throttle.NewLayer[string, string](throttle.NotOverloaded, throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))
	refusing, accepting := &backend{}, &backend{}
	a := l.Wrap(refusing).(*throttle.Throttle[string, string])
	b := l.Wrap(accepting).(*throttle.Throttle[string, string])
	fill(t, a, refusing, 4, 0)
	fill(t, b, accepting, 1, 0)
	expectProbability(t, a, 4.0/5)
	expectProbability(t, b, 1.0/2)
}

// Callers on several goroutines at once, the window moving on under them
// every 100ms: once they are done, the window holds exactly the requests
// they made, rejected or sent, and the accepts among them.
func TestConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const callers, each = 8, 60
		var calls atomic.Int64
		b := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
			if calls.Add(1)%3 != 0 {
				return "", loadshed.ErrOverloaded // it accepts one call in three
			}
			return "ok", nil
		})
		var mu sync.Mutex
		r := rand.New(rand.NewPCG(3, 4))
		draw := randFunc(func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64()
		})
		svc := throttle.New(b, throttle.NotOverloaded, throttle.WithWindow(12*time.Second),
			throttle.WithMaxRejection(1), throttle.WithRand(draw))
		var wg sync.WaitGroup
		var rejected, accepted [callers]int
		for c := range callers {
			wg.Go(func() {
				for range each {
					_, err := tower.Call(context.Background(), svc, "req")
					if errors.Is(err, throttle.ErrThrottled) {
						rejected[c]++
					} else if err == nil {
						accepted[c]++
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		var accepts int
		for c := range callers {
			accepts += accepted[c]
		}
		requests := callers * each
		want := max(0, (float64(requests)-2*float64(accepts))/(float64(requests)+1))
		expectProbability(t, svc, want)
		var rejections int
		for c := range callers {
			rejections += rejected[c]
		}
		if got := int(calls.Load()) + rejections; got != requests {
			t.Errorf("%d calls and %d rejections, want %d requests", calls.Load(), rejections, requests)
		}
		if rejections == 0 {
			t.Error("no request was rejected: the test tests nothing")
		}
		t.Logf("%d requests, %d accepts, %v rejected", requests, accepts, rejected)
	})
}

// randFunc is a Rand made of a function.
type randFunc func() float64

func (f randFunc) Float64() float64 { return f() }
