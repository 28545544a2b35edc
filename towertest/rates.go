package towertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/towergo/tower"
)

// A Behaviour is what a [Caller] of a random run does with its request.
type Behaviour int

const (
	Patient   Behaviour = iota // waits as long as it takes, then calls
	Deadline                   // gives up at a deadline After from its arrival
	Cancelled                  // gives up when cancelled, After from its arrival, with no deadline
	Unused                     // holds its permit for After, then releases it unused
	Holds                      // holds its permit for After, then calls
	Probe                      // asks with a done ctx, and calls if ready
)

// A Caller is one caller of a random run: it arrives at Arrive after the
// run's start and does what Does says.
type Caller struct {
	Arrive time.Duration
	Does   Behaviour
	After  time.Duration // the deadline, the cancel or the hold
	Index  int           // its place in the run, in order of arrival
}

// RandomCallers returns n callers arriving within span, in order, for the
// seed. A third give up, half at a deadline and half by a cancel with no
// deadline, each within patience, in whole milliseconds (so that give-ups
// and a limit's instants meet now and then); the others wait, hold a
// permit then call or release it unused, or probe, in equal shares.
func RandomCallers(seed uint64, n int, span, patience time.Duration) []Caller {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	cs := make([]Caller, n)
	for i := range cs {
		c := Caller{Arrive: time.Duration(rng.Int64N(int64(span)))}
		switch r := rng.IntN(6); {
		case r == 0:
			c.Does = Deadline
		case r == 1:
			c.Does = Cancelled
		default:
			c.Does = []Behaviour{Patient, Patient, Unused, Holds, Probe}[rng.IntN(5)]
		}
		c.After = time.Duration(rng.Int64N(int64(patience/time.Millisecond)+1)) * time.Millisecond
		cs[i] = c
	}
	slices.SortFunc(cs, func(a, b Caller) int { return int(a.Arrive - b.Arrive) })
	for i := range cs {
		cs[i].Index = i
	}
	return cs
}

// Drive runs callers, in order, each on a goroutine of its own from its
// arrival after now, through svc with the request req(c), and waits for
// them all. It returns the sorted instants after now at which svc's Ready
// granted the permits that were then called: for a limit that admits in
// Ready, its admissions (for one that admits in Call, record the instants
// in the service it wraps instead). Under testing/synctest they are exact.
func Drive[Req, Res any](svc tower.Service[Req, Res], callers []Caller, req func(Caller) Req) []time.Duration {
	start := time.Now()
	var (
		mu      sync.Mutex
		granted []time.Duration
		wg      sync.WaitGroup
	)
	for _, c := range callers {
		time.Sleep(time.Until(start.Add(c.Arrive)))
		wg.Go(func() {
			ctx, cancel := callerContext(c)
			defer cancel()
			p, err := svc.Ready(ctx)
			if err != nil {
				return
			}
			at := time.Since(start)
			switch c.Does {
			case Unused:
				time.Sleep(c.After)
				p.Release()
				return
			case Holds:
				time.Sleep(c.After)
			}
			mu.Lock()
			granted = append(granted, at)
			mu.Unlock()
			p.Call(ctx, req(c))
		})
	}
	wg.Wait()
	slices.Sort(granted)
	return granted
}

// callerContext returns the ctx that c asks with: a deadline, a cancel
// after c.After, or none; for a probe, one already done.
func callerContext(c Caller) (context.Context, context.CancelFunc) {
	switch c.Does {
	case Deadline:
		return context.WithTimeout(context.Background(), c.After)
	case Cancelled:
		ctx, cancel := context.WithCancel(context.Background())
		t := time.AfterFunc(c.After, cancel)
		return ctx, func() { t.Stop(); cancel() }
	case Probe:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	return context.WithCancel(context.Background())
}

// CheckBurst returns an error naming the first stretch of time in which at,
// the sorted instants at which a limit admitted requests, holds more than
// burst + (d+slack)/interval of them, rounded down, d the stretch's
// length; nil if there is none. That is a token bucket's bound, checked
// over every pair of admissions, so that one request too many shows
// wherever it is. slack is for instants read on a clock other than the
// limit's (a round trip away): zero under testing/synctest.
func CheckBurst(at []time.Duration, burst int, interval, slack time.Duration) error {
	for i := range at {
		for j := i + burst; j < len(at); j++ {
			if bound := burst + int((at[j]-at[i]+slack)/interval); j-i+1 > bound {
				return fmt.Errorf("%d admissions within [%v, %v], want at most %d (burst %d, a token every %v)",
					j-i+1, at[i], at[j], bound, burst, interval)
			}
		}
	}
	return nil
}
