package timeout_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
)

// running counts the handlers running at once, and the most there were.
type running struct {
	now, most atomic.Int32
}

// handler ignores its context and takes 2s, counted in r.
func (r *running) handler() tower.ServiceFunc[string, string] {
	return func(_ context.Context, req string) (string, error) {
		n := r.now.Add(1)
		defer r.now.Add(-1)
		for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
		}
		time.Sleep(2 * time.Second)
		return req, nil
	}
}

// Handlers that ignore their context for 2s, behind a ConcurrencyLimit of
// 10 and a Timeout of 50ms, with a LoadShed outermost; 100 callers arrive,
// one every 30ms. In the order the package doc recommends, LoadShed >
// Timeout > ConcurrencyLimit, never more than 10 handlers run at once in
// either mode: the limit's permit is the inner call's, and an abandoned
// call keeps it until the handler returns. A caller is shed at once, or
// answered ErrElapsed: at 50ms in Abandon mode, when the handler returns
// in Cooperative mode. In the other order, LoadShed > ConcurrencyLimit >
// Timeout, Abandon mode gives the permit back when it answers the caller,
// while the handler runs on: the limit no longer counts what runs, and
// far more than 10 handlers run at once. Either way no goroutine is left
// once the handlers have returned.
func TestPlacementUnderALimit(t *testing.T) {
	tests := []struct {
		name     string
		timedOut bool // the Timeout is outside the limit
		opts     []timeout.Option
		answered time.Duration // when a caller that is not shed hears
		bounded  bool          // at most 10 handlers run at once
	}{
		{"LoadShed>Timeout>Limit/Abandon", true, abandon, 50 * ms, true},
		{"LoadShed>Timeout>Limit/Cooperative", true, nil, 2 * time.Second, true},
		{"LoadShed>Limit>Timeout/Abandon", false, abandon, 50 * ms, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				goroutines := bubbleGoroutines()
				var r running
				svc := placed(r.handler(), tt.timedOut, tt.opts)
				var (
					wg               sync.WaitGroup
					shed, timedOut   atomic.Int32
					unexpected, late atomic.Int32
				)
				for range 100 {
					wg.Go(func() {
						start := time.Now()
						_, err := tower.Call(t.Context(), svc, "hello")
						switch at := time.Since(start); {
						case errors.Is(err, loadshed.ErrOverloaded) && at == 0:
							shed.Add(1)
						case errors.Is(err, timeout.ErrElapsed) && at == tt.answered:
							timedOut.Add(1)
						case errors.Is(err, timeout.ErrElapsed):
							late.Add(1)
						default:
							unexpected.Add(1)
						}
					})
					time.Sleep(30 * ms)
				}
				wg.Wait()
				time.Sleep(2 * time.Second) // the last abandoned handlers return
				synctest.Wait()

				if n := late.Load(); n != 0 {
					t.Errorf("%d callers timed out at another time than %v", n, tt.answered)
				}
				if n := unexpected.Load(); n != 0 {
					t.Errorf("%d callers got neither ErrOverloaded at once nor ErrElapsed", n)
				}
				most := r.most.Load()
				if bounded := most <= 10; bounded != tt.bounded {
					t.Errorf("got at most %d handlers running at once (shed %d, timed out %d): bounded by the limit of 10 is %t, want %t",
						most, shed.Load(), timedOut.Load(), bounded, tt.bounded)
				}
				if most < 10 {
					t.Errorf("got at most %d handlers running at once, want the limit of 10 reached", most)
				}
				if n := r.now.Load(); n != 0 {
					t.Errorf("%d handlers still running, want 0", n)
				}
				if n := bubbleGoroutines(); n != goroutines {
					t.Errorf("got %d goroutines in the bubble once the handlers returned, want %d as before", n, goroutines)
				}
			})
		})
	}
}

// placed returns LoadShed > Timeout(50ms) > ConcurrencyLimit(10) > h if
// timedOut, and LoadShed > ConcurrencyLimit(10) > Timeout(50ms) > h
// otherwise.
func placed(h tower.Service[string, string], timedOut bool, opts []timeout.Option) tower.Service[string, string] {
	b := stack.New[string, string]().Layer(loadshed.NewLayer[string, string]())
	if timedOut {
		b = b.Layer(timeout.NewLayer[string, string](50*ms, opts...)).Layer(limit.NewConcurrencyLayer[string, string](10))
	} else {
		b = b.Layer(limit.NewConcurrencyLayer[string, string](10)).Layer(timeout.NewLayer[string, string](50*ms, opts...))
	}
	return b.Service(h)
}

// bubbleID finds the synctest bubble of a goroutine in the header of its
// stack trace: "goroutine 18 [running, synctest bubble 4]:".
var bubbleID = regexp.MustCompile(`, synctest bubble (\d+)[\] ]`)

// bubbleGoroutines returns the number of goroutines in the caller's
// synctest bubble, read from the stack traces of all goroutines.
func bubbleGoroutines() int {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	first, _, _ := bytes.Cut(buf, []byte("\n")) // the caller's own
	own := bubbleID.FindSubmatch(first)
	count := 0
	for _, m := range bubbleID.FindAllSubmatch(buf, -1) {
		if bytes.Equal(m[1], own[1]) {
			count++
		}
	}
	return count
}
