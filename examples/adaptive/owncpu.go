package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
)

// The closed loop of the scenario where the process itself is the
// bottleneck. Its times are twenty times those of package adaptive's
// behaviour test of it (50µs and 1ms there): the limits move the same
// way, window by window, and the counts are about a twentieth; and a run
// in real time does not ask its timers for 50µs, which a busy machine's
// overshoot by more than that.
const (
	callers    = 64
	cpus       = 2
	cpuWork    = time.Millisecond      // before and after each call, and for a shed request's answer
	dependency = 20 * time.Millisecond // the dependency's answer, whatever the load
	slots      = 2 * callers           // see sleepUntil
)

// cores is the process's own CPU: cpus cores that each request needs for
// cpuWork before and after its call to the dependency, first come first
// served, and the mean time requests waited for one since the last
// reading, which is what adaptive.WithOwnDelay is told.
type cores struct {
	start   time.Time
	mu      sync.Mutex
	free    []time.Time
	waited  time.Duration
	counted int
}

func newCores(start time.Time) *cores {
	c := &cores{start: start, free: make([]time.Time, cpus)}
	for i := range c.free {
		c.free[i] = start
	}
	return c
}

// sleepUntil sleeps until the first instant at or after t that belongs
// to caller i: 2i+1 nanoseconds past a multiple of slots from the start.
// Two callers never wake at one instant, nor at a multiple of sampleEvery
// (an even number of nanoseconds from the start), when watch reads the
// limit; so which goroutine runs first never decides anything, and the
// run is the same every time on synctest's clock.
func (c *cores) sleepUntil(i int, t time.Time) {
	off := (time.Duration(2*i+1) - t.Sub(c.start)%slots + slots) % slots
	time.Sleep(time.Until(t.Add(off)))
}

// run has caller i take a core for cpuWork.
func (c *cores) run(i int) {
	c.sleepUntil(i, time.Now())
	now := time.Now()
	c.mu.Lock()
	k := 0
	for j := range c.free {
		if c.free[j].Before(c.free[k]) {
			k = j
		}
	}
	begin := c.free[k]
	if begin.Before(now) {
		begin = now
	}
	end := begin.Add(cpuWork)
	c.free[k] = end
	c.waited += begin.Sub(now)
	c.counted++
	c.mu.Unlock()
	c.sleepUntil(i, end)
}

// mean is the function for adaptive.WithOwnDelay: the mean wait per call
// since the last reading, both of a call's waits.
func (c *cores) mean() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counted == 0 {
		return 0
	}
	d := 2 * c.waited / time.Duration(c.counted)
	c.waited, c.counted = 0, 0
	return d
}

// ownCPU is a closed loop whose requests wait for the process's own
// cores, in front of a dependency with headroom: the process, not the
// dependency, is the bottleneck.
func ownCPU() scenario {
	const length = 10 * time.Second
	s := time.Second
	return scenario{
		title: fmt.Sprintf("The process as the bottleneck: %d callers in a closed loop for %v through LoadShed > limiter (failsafe-go's alone);\n"+
			"each request takes %v of %d cores before and after a dependency that answers in %v, a shed one %v. Ours are told the\n"+
			"cores' queue (WithOwnDelay), gradient2 untold is not. answered: the share of requests not shed; the rest: over the whole run.",
			callers, length, cpuWork, cpus, dependency, cpuWork),
		length: length,
		measure: func() []result {
			cs := []struct {
				name    string
				role    role
				protect func(dep tower.Service[int, struct{}], cpu *cores) (tower.Service[int, struct{}], func() int)
			}{
				{"gradient2", ourOwn, toldOurs(adaptive.Gradient2(), true)},
				{"vegas", ourOwn, toldOurs(adaptive.Vegas(), true)},
				{"gradient2 untold", baseline, toldOurs(adaptive.Gradient2(), false)},
				{"failsafe", peer, func(dep tower.Service[int, struct{}], _ *cores) (tower.Service[int, struct{}], func() int) {
					f := newFailsafeLimit(dep, true)
					return f, f.Limit
				}},
				{"failsafe0", peer, func(dep tower.Service[int, struct{}], _ *cores) (tower.Service[int, struct{}], func() int) {
					f := newFailsafeLimit(dep, false)
					return f, f.Limit
				}},
			}
			results := make([]result, len(cs))
			start := time.Now()
			var wg sync.WaitGroup
			for k, c := range cs {
				cpu := newCores(start)
				var inDep atomic.Int64
				dep := tower.ServiceFunc[int, struct{}](func(ctx context.Context, i int) (struct{}, error) {
					inDep.Add(1)
					defer inDep.Add(-1)
					cpu.run(i)
					cpu.sleepUntil(i, time.Now().Add(dependency))
					cpu.run(i)
					return struct{}{}, nil
				})
				svc, limit := c.protect(dep, cpu)
				results[k].name, results[k].role = c.name, c.role
				wg.Go(func() { results[k].out = closedLoop(svc, cpu, start, length) })
				wg.Go(func() { results[k].samples = watch(func() int { return int(inDep.Load()) }, limit, start, length) })
			}
			wg.Wait()
			return results
		},
		table: func(w io.Writer, rs []result) {
			fmt.Fprintln(w, "strategy\tlimit\tlimit in last s\trequests\tanswered\tanswered in last s\tanswered/s\tp50\tp99")
			for _, r := range rs {
				f, last := figuresOf(r.out, 0, length, every), figuresOf(r.out, length-s, length, every)
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\n", r.name,
					spreadString(limitSpread(r.samples, 0, length)), spreadString(limitSpread(r.samples, length-s, length)),
					f.sent, percent(f.answered, f.sent), percent(last.answered, last.sent), f.answered/int(length/s),
					ms(f.p50), ms(f.p99))
			}
		},
		scores: func(r result) []score {
			f := figuresOf(r.out, 0, length, every)
			return []score{
				{"answered/s", f.answered / int(length/s), +1, ""},
				{"p99", int(f.p99.Milliseconds()), -1, "ms"},
			}
		},
	}
}

// toldOurs makes package adaptive's limiter with alg under a LoadShed,
// told the cores' queue if told.
func toldOurs(alg func() adaptive.Algorithm, told bool) func(tower.Service[int, struct{}], *cores) (tower.Service[int, struct{}], func() int) {
	return func(dep tower.Service[int, struct{}], cpu *cores) (tower.Service[int, struct{}], func() int) {
		var opts []adaptive.Option
		if told {
			opts = append(opts, adaptive.WithOwnDelay(cpu.mean))
		}
		l, limit := newOurs(dep, alg, opts...)
		return loadshed.New[int, struct{}](l), limit
	}
}

// closedLoop has callers each send a request through svc as soon as its
// last is answered, for length from start, a shed request's answer taking
// cpuWork of a core, and returns what each request got, in the order
// they were sent.
func closedLoop(svc tower.Service[int, struct{}], cpu *cores, start time.Time, length time.Duration) []outcome {
	var mu sync.Mutex
	var out []outcome
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			var mine []outcome
			for {
				// Strictly after now: a caller that has just given back a
				// permit, waking a waiter, lets it take the permit first.
				cpu.sleepUntil(i, time.Now().Add(1))
				sent := time.Now()
				if sent.Sub(start) >= length {
					break
				}
				_, err := tower.Call(context.Background(), svc, i)
				o := outcome{due: sent.Sub(start)}
				switch {
				case err == nil:
					o.kind = served
				case tower.IsOverloaded(err):
					o.kind = shed
					cpu.run(i)
				default:
					o.kind = failed
				}
				o.latency = time.Since(sent)
				mine = append(mine, o)
			}
			mu.Lock()
			out = append(out, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b outcome) int { return cmp.Compare(a.due, b.due) })
	return out
}
