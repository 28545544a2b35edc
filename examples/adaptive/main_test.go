package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
)

// pictures, if set, is the directory TestAdaptive draws the run's two
// pictures into, as adaptive.png and adaptive-scenarios.png: those under
// docs are of the test's run, whose figures the package doc gives.
var pictures = flag.String("pictures", "", "write the run's pictures into this directory")

// The program, on the virtual clock: its lines, exactly, and the two
// pictures it draws, which are PNGs. (One run: the program runs every
// scenario, and drawing is all -plot and -plot-scenarios add.)
func TestAdaptive(t *testing.T) {
	dir := *pictures
	if dir == "" {
		dir = t.TempDir()
	}
	paths := []string{filepath.Join(dir, "adaptive.png"), filepath.Join(dir, "adaptive-scenarios.png")}
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		if err := run(&out, paths[0], paths[1]); err != nil {
			t.Fatal(err)
		}
		const want = `none      phase=1 capacity=400/s goodput=2% p50=1000ms p99=1009ms settle=never shed=0%
none      phase=2 capacity=200/s goodput=0% p50=1000ms p99=1009ms settle=never shed=0%
none      phase=3 capacity=600/s goodput=0% p50=1005ms p99=1009ms settle=never shed=0%
static    phase=1 capacity=400/s goodput=100% p50=39ms p99=39ms settle=0s shed=50%
static    phase=2 capacity=200/s goodput=100% p50=79ms p99=79ms settle=0s shed=75%
static    phase=3 capacity=600/s goodput=100% p50=23ms p99=27ms settle=0s shed=25%
gradient2 phase=1 capacity=400/s goodput=100% p50=11ms p99=27ms settle=0s shed=50%
gradient2 phase=2 capacity=200/s goodput=100% p50=17ms p99=21ms settle=0s shed=75%
gradient2 phase=3 capacity=600/s goodput=100% p50=11ms p99=14ms settle=0s shed=25%
vegas     phase=1 capacity=400/s goodput=100% p50=20ms p99=30ms settle=0s shed=50%
vegas     phase=2 capacity=200/s goodput=100% p50=32ms p99=40ms settle=0s shed=75%
vegas     phase=3 capacity=600/s goodput=100% p50=14ms p99=16ms settle=0s shed=25%
aimd      phase=1 capacity=400/s goodput=100% p50=47ms p99=55ms settle=0s shed=50%
aimd      phase=2 capacity=200/s goodput=100% p50=50ms p99=99ms settle=0s shed=75%
aimd      phase=3 capacity=600/s goodput=100% p50=25ms p99=35ms settle=0s shed=25%
failsafe  phase=1 capacity=400/s goodput=2% p50=221ms p99=386ms settle=never shed=49%
failsafe  phase=2 capacity=200/s goodput=0% p50=427ms p99=517ms settle=never shed=75%
failsafe  phase=3 capacity=600/s goodput=0% p50=142ms p99=173ms settle=never shed=25%
failsafe0 phase=1 capacity=400/s goodput=100% p50=61ms p99=75ms settle=0s shed=50%
failsafe0 phase=2 capacity=200/s goodput=1% p50=110ms p99=138ms settle=never shed=75%
failsafe0 phase=3 capacity=600/s goodput=100% p50=39ms p99=52ms settle=0s shed=25%
gradient2 targets: met
vegas targets: met
aimd targets: met

Started under overload: 8 workers of 10ms (800/s), offered 1600/s from the first instant for 10s.
settled: from then on the limit is within 9-16; limit and queued (mean, beyond the workers): from 2s;
p99 in 1st s: requests sent in the first second; the rest: requests sent from 1s.
strategy   settled  limit  queued  p99 in 1st s  goodput  p50    p99    shed
gradient2  100ms    14     4.0     21ms          100%     13ms   17ms   50%
vegas      100ms    14     4.0     21ms          100%     13ms   17ms   50%
static20   never    20     12.0    27ms          100%     22ms   27ms   50%
failsafe   never    22-29  18.2    97ms          16%      113ms  130ms  50%
failsafe0  never    22-29  18.2    28ms          100%     30ms   37ms   50%
gradient2 against failsafe-go: ahead or even on every figure
vegas against failsafe-go: ahead or even on every figure

A capacity drop and return: 8 workers of 10ms, 2 from 10s, 8 again from 20s; offered 1600/s.
settled: from the stage's start until the limit is within its workers' band for good (eight: 9-16, two: 2-8);
limit and swing ((most-least)/least): over the stage's last 5s; the rest: requests sent in the stage.
strategy   stage       settled  limit  swing  goodput  p50    p99    shed
gradient2  8 workers   100ms    14     0%     100%     16ms   17ms   50%
gradient2  2 from 10s  200ms    4      0%     100%     17ms   32ms   88%
gradient2  8 from 20s  300ms    13     0%     100%     13ms   18ms   50%
vegas      8 workers   100ms    14     0%     100%     16ms   17ms   50%
vegas      2 from 10s  200ms    8      0%     100%     30ms   44ms   87%
vegas      8 from 20s  100ms    14     0%     100%     14ms   17ms   50%
failsafe   8 workers   never    25-29  16%    25%      111ms  149ms  49%
failsafe   2 from 10s  never    20-23  15%    0%       439ms  533ms  88%
failsafe   8 from 20s  never    23-28  22%    45%      103ms  127ms  50%
failsafe0  8 workers   never    25-29  16%    100%     30ms   37ms   50%
failsafe0  2 from 10s  never    20-23  15%    30%      110ms  139ms  88%
failsafe0  8 from 20s  never    23-28  22%    100%     27ms   36ms   50%
gradient2 against failsafe-go: ahead or even on every figure
vegas against failsafe-go: ahead or even on every figure

A service 4x slower, then fast again: 8 workers of 10ms, 40ms from 10s, 10ms again from 20s; offered 1600/s.
settled: from the stage's start until the limit is within its workers' band for good (eight: 9-16, two: 2-8);
limit and swing ((most-least)/least): over the stage's last 5s; the rest: requests sent in the stage.
strategy   stage          settled  limit  swing  goodput  p50    p99    shed
gradient2  10ms           100ms    14     0%     100%     16ms   17ms   50%
gradient2  40ms from 10s  0s       14     0%     100%     42ms   77ms   88%
gradient2  10ms from 20s  0s       14     0%     100%     12ms   17ms   50%
vegas      10ms           100ms    14     0%     100%     16ms   17ms   50%
vegas      40ms from 10s  0s       14     0%     100%     42ms   77ms   88%
vegas      10ms from 20s  0s       14     0%     100%     12ms   17ms   50%
failsafe   10ms           never    25-29  16%    25%      111ms  177ms  49%
failsafe   40ms from 10s  never    20-23  15%    0%       436ms  544ms  88%
failsafe   10ms from 20s  never    22-27  23%    55%      97ms   121ms  50%
failsafe0  10ms           never    25-29  16%    100%     30ms   37ms   50%
failsafe0  40ms from 10s  never    21-24  14%    15%      119ms  156ms  88%
failsafe0  10ms from 20s  never    23-28  22%    100%     29ms   36ms   50%
gradient2 against failsafe-go: ahead or even on every figure
vegas against failsafe-go: ahead or even on every figure

A low-priority spike without a LoadShed: 8 workers of 10ms (800/s); 400/s of normal priority for 12s, and 4800/s of low
priority from 4s to 7s, each with a deadline of 1s. limit: from 2s; answered/s: answers in the spike, all priorities;
within 100ms/s: those of them that came within 100ms of their request; the rest: requests sent in it, p99 over all of them,
refused ones too.
strategy   limit  answered/s  within 100ms/s  normal answered  normal p99  low answered  low p99
gradient2  14-20  798         798             100%             17ms        8%            20ms
vegas      15-30  798         798             100%             18ms        8%            20ms
aimd       20-25  798         798             100%             27ms        8%            24ms
failsafe   22-26  798         30              15%              127ms       16%           127ms
failsafe0  22-26  798         798             12%              34ms        16%           35ms
gradient2 against failsafe-go: ahead or even on every figure
vegas against failsafe-go: ahead or even on every figure
aimd against failsafe-go: ahead or even on every figure

The process as the bottleneck: 64 callers in a closed loop for 10s through LoadShed > limiter (failsafe-go's alone);
each request takes 1ms of 2 cores before and after a dependency that answers in 20ms, a shed one 1ms. Ours are told the
cores' queue (WithOwnDelay), gradient2 untold is not. answered: the share of requests not shed; the rest: over the whole run.
strategy          limit   limit in last s  requests  answered  answered in last s  answered/s  p50   p99
gradient2         20-129  129              10122     98%       100%                996         63ms  63ms
vegas             20-128  128              10122     98%       100%                996         63ms  63ms
gradient2 untold  19-137  126-137          13086     53%       100%                699         63ms  80ms
failsafe          20-30   29-30            9924      100%      100%                992         63ms  69ms
failsafe0         20-30   29-30            16763     20%       24%                 331         76ms  79ms
gradient2 against failsafe-go: ahead or even on every figure
vegas against failsafe-go: ahead or even on every figure
`
		if got := out.String(); got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if png := []byte("\x89PNG\r\n\x1a\n"); !bytes.HasPrefix(b, png) {
			t.Errorf("%s: got a file that starts %q, want a PNG", filepath.Base(path), b[:min(len(b), 8)])
		}
	}
}

// The backend serves 400 requests per second in the first phase, 200 in
// the second and 600 in the third, however many wait: twenty callers
// sending a request as soon as the last is answered get exactly that many
// answers in each phase. (Workers that come back at a phase's start are
// free a few nanoseconds after it, one more for each (see unpark), so a
// phase's answers may end as much after it.)
func TestBackendCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b := newBackend(start, phases)
		var (
			mu   sync.Mutex
			done []time.Duration
			wg   sync.WaitGroup
		)
		for range 20 {
			wg.Go(func() {
				for time.Since(start) < runLength() {
					if err := b.serve(t.Context()); err != nil {
						t.Error(err)
					}
					mu.Lock()
					done = append(done, time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slack := time.Duration(maxWorkers(phases))
		var from time.Duration
		for i, ph := range phases {
			to := from + ph.length
			n := 0
			for _, d := range done {
				if d > from+slack && d <= to+slack {
					n++
				}
			}
			if want := capacity(ph.workers) * int(ph.length/time.Second); n != want {
				t.Errorf("phase %d: got %d answers, want %d", i+1, n, want)
			}
			from = to
		}
	})
}

// At each change the pool has its new phase's workers at once: at 10s two,
// so that eight requests sent 1ms apart are answered two by two every
// 10ms; at 20s six, so that twelve are answered six by six.
func TestBackendPhaseChange(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		at   time.Duration
		n    int
		want []time.Duration
	}{
		{10 * time.Second, 8, []time.Duration{10, 11, 20, 21, 30, 31, 40, 41}},
		{20 * time.Second, 12, []time.Duration{10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25}},
	} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			b := newBackend(start, phases)
			time.Sleep(tc.at)
			answered := make([]time.Duration, tc.n)
			var wg sync.WaitGroup
			for i := range tc.n {
				wg.Go(func() {
					b.serve(context.Background())
					answered[i] = (time.Since(start) - tc.at) / ms
				})
				time.Sleep(ms)
			}
			wg.Wait()
			if !slices.Equal(answered, tc.want) {
				t.Errorf("at %v: answered after %v ms, want %v ms", tc.at, answered, tc.want)
			}
		})
	}
}

// A request whose client leaves while it waits for a worker is dropped at
// once, and takes no worker's time.
func TestBackendDropsRequestWhoseClientLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b := newBackend(start, phases)
		var wg sync.WaitGroup
		for range phases[0].workers {
			wg.Go(func() { b.serve(context.Background()) })
		}
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		defer cancel()
		if err := b.serve(ctx); err != context.DeadlineExceeded || time.Since(start) != 5*time.Millisecond {
			t.Errorf("the request whose client left returned %v at %v, want %v at 5ms", err, time.Since(start), context.DeadlineExceeded)
		}
		wg.Wait()
		b.serve(context.Background())
		if got := time.Since(start); got != 2*serviceTime {
			t.Errorf("the next request was answered at %v, want %v: the dropped one took no worker's time", got, 2*serviceTime)
		}
	})
}

// The static limit lets 16 requests in, four served and twelve waiting,
// and sheds the seventeenth at once.
func TestStaticShedsBeyondItsLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		svc, limit := strategies()[1].protect(newBackend(start, phases).service())
		var wg sync.WaitGroup
		for range staticLimit {
			wg.Go(func() {
				if _, err := tower.Call(context.Background(), svc, 0); err != nil {
					t.Error(err)
				}
			})
			synctest.Wait()
		}
		if _, err := tower.Call(context.Background(), svc, 0); !tower.IsOverloaded(err) || time.Since(start) != 0 {
			t.Errorf("the 17th request: got %v at %v, want an overload at once", err, time.Since(start))
		}
		wg.Wait()
		if got, want := time.Since(start), time.Duration(staticLimit/phases[0].workers)*serviceTime; got != want || limit() != staticLimit {
			t.Errorf("the 16 were answered by %v with limit %d, want by %v with %d", got, limit(), want, staticLimit)
		}
	})
}

// failsafe-go's limiter, full at its initial limit of 20, lets twice that
// many wait; then it rejects a caller with a probability that rises with
// the queue, from 0 at 40 waiting to 1 at 60, and rejects every caller
// once 60 wait. With the seeded source, of 100 callers at once, the first
// 60 are let in, 3 of the next 20 are rejected, and 18 of the last 20.
func TestFailsafeQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFailsafeLimit(newBackend(time.Now(), phases).service(), true)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			rejected []int
		)
		for i := range 100 {
			wg.Go(func() {
				if _, err := tower.Call(context.Background(), f, 0); tower.IsOverloaded(err) {
					mu.Lock()
					rejected = append(rejected, i)
					mu.Unlock()
				}
			})
			synctest.Wait()
		}
		wg.Wait()
		slices.Sort(rejected)
		want := []int{69, 75, 76, 80, 81, 82, 83, 84, 85, 87, 88, 89, 90, 91, 92, 93, 95, 96, 97, 98, 99}
		if !slices.Equal(rejected, want) {
			t.Errorf("rejected callers %v, want %v", rejected, want)
		}
	})
}

// The schedule is 24,000 instants, one in each interval of 1.25ms, the
// same at every run.
func TestScheduleIsBounded(t *testing.T) {
	at := schedule()
	if len(at) != 24000 {
		t.Fatalf("got %d instants, want 24000", len(at))
	}
	for i, d := range at {
		if lo := time.Duration(i) * interval; d < lo || d >= lo+interval {
			t.Fatalf("instant %d is %v, want it in [%v, %v)", i, d, lo, lo+interval)
		}
	}
	if !slices.Equal(at, schedule()) {
		t.Error("two schedules differ, want the same")
	}
}

// settleTime over a phase of 10s with a request every 10ms that takes
// 50ms, but for slow ones that take 150ms: the p99 of a window of 50
// requests is within the objective only if all are fast.
func TestSettleTime(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		slow func(at time.Duration) bool
		want time.Duration
	}{
		{"never slow", func(time.Duration) bool { return false }, 0},
		{"slow for the first 1.5s", func(at time.Duration) bool { return at < 1500*ms }, 1500 * ms},
		{"slow once more at 9s", func(at time.Duration) bool { return at < 1500*ms || at == 9000*ms }, 9010 * ms},
		{"slow in the last window", func(at time.Duration) bool { return at == 9850*ms }, -1},
		{"slow after the last window", func(at time.Duration) bool { return at == 9900*ms }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []outcome
			for at := time.Duration(0); at < 10*time.Second; at += 10 * ms {
				o := outcome{due: at, latency: 50 * ms}
				if tc.slow(at) {
					o.latency = 150 * ms
				}
				in = append(in, o, outcome{due: at, latency: 2 * time.Second, kind: shed})
			}
			if got := settleTime(in, 0, 10*time.Second); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// summarize counts goodput against capacity, and takes p50 and p99 over
// the requests not shed, those whose client gave up included. The slow
// requests at each phase's end fall in its last window: it never settles.
func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	var out []outcome
	var from time.Duration
	for _, ph := range phases {
		for at := from; at < from+ph.length; at += ph.length / 100 {
			out = append(out, outcome{due: at, latency: 10 * ms}) // 95 good
		}
		for i := range 3 {
			out[len(out)-1-i].latency = 200 * ms // 2 late and 1 timed out
		}
		out[len(out)-3].kind = failed
		out[len(out)-4].kind = shed // and 1 shed
		from += ph.length
	}
	got := summarize(out)
	for i, s := range got {
		c := capacity(phases[i].workers)
		want := phaseStats{capacity: c, goodput: roundDiv(100*96, c*10), p50: 10 * ms, p99: 200 * ms, shed: 1, settle: -1}
		if s != want {
			t.Errorf("phase %d: got %+v, want %+v", i+1, s, want)
		}
	}
}
