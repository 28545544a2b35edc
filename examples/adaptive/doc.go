// Adaptive compares ways to protect a server whose capacity changes: no
// limit, a static concurrency limit, package adaptive's limit with each of
// its algorithms, and failsafe-go's adaptive limiter. It prints a line per
// strategy and phase, then whether each of ours met the targets below:
//
//	none      phase=1 capacity=400/s goodput=2% p50=1000ms p99=1009ms settle=never shed=0%
//	none      phase=2 capacity=200/s goodput=0% p50=1000ms p99=1009ms settle=never shed=0%
//	none      phase=3 capacity=600/s goodput=0% p50=1005ms p99=1009ms settle=never shed=0%
//	static    phase=1 capacity=400/s goodput=100% p50=39ms p99=39ms settle=0s shed=50%
//	static    phase=2 capacity=200/s goodput=100% p50=79ms p99=79ms settle=0s shed=75%
//	static    phase=3 capacity=600/s goodput=100% p50=23ms p99=27ms settle=0s shed=25%
//	gradient2 phase=1 capacity=400/s goodput=100% p50=11ms p99=27ms settle=0s shed=50%
//	gradient2 phase=2 capacity=200/s goodput=100% p50=17ms p99=21ms settle=0s shed=75%
//	gradient2 phase=3 capacity=600/s goodput=100% p50=11ms p99=14ms settle=0s shed=25%
//	vegas     phase=1 capacity=400/s goodput=100% p50=20ms p99=30ms settle=0s shed=50%
//	vegas     phase=2 capacity=200/s goodput=100% p50=32ms p99=40ms settle=0s shed=75%
//	vegas     phase=3 capacity=600/s goodput=100% p50=14ms p99=16ms settle=0s shed=25%
//	aimd      phase=1 capacity=400/s goodput=100% p50=47ms p99=55ms settle=0s shed=50%
//	aimd      phase=2 capacity=200/s goodput=100% p50=50ms p99=99ms settle=0s shed=75%
//	aimd      phase=3 capacity=600/s goodput=100% p50=25ms p99=35ms settle=0s shed=25%
//	failsafe  phase=1 capacity=400/s goodput=2% p50=221ms p99=386ms settle=never shed=49%
//	failsafe  phase=2 capacity=200/s goodput=0% p50=427ms p99=517ms settle=never shed=75%
//	failsafe  phase=3 capacity=600/s goodput=0% p50=142ms p99=173ms settle=never shed=25%
//	failsafe0 phase=1 capacity=400/s goodput=100% p50=61ms p99=75ms settle=0s shed=50%
//	failsafe0 phase=2 capacity=200/s goodput=1% p50=110ms p99=138ms settle=never shed=75%
//	failsafe0 phase=3 capacity=600/s goodput=100% p50=39ms p99=52ms settle=0s shed=25%
//	gradient2 targets: met
//	vegas targets: met
//	aimd targets: met
//
// Then it runs five scenarios that the comparison does not test and
// prints a table for each, under a few lines that say what it is and what
// each column counts (see The scenarios).
//
// Those are the figures of its test, which runs the same program on
// synctest's virtual clock. In real time every strategy of every scenario
// runs at once, each against its own server, so the program takes the
// longest run's length, about 31 seconds, and its figures are the
// machine's as much as the limiters': on a busy machine timers fire late
// and requests wait for a CPU. On the 2-core VM this was written on,
// shared with other jobs, a run at a load average of 5 printed goodputs
// 5% to 15% lower and p99s two to five times higher, settle times of
// seconds, and in the first scenario limits of 18 to 20 for Gradient2 and
// Vegas, not 14; at a load of 10 to 30, p99s of seconds. (Those runs were
// of an earlier version of the limiter, whose windows all lasted a
// second.) The virtual clock has none of that.
//
// From the repository's root,
//
//	go run ./examples/adaptive -plot adaptive.png -plot-scenarios adaptive-scenarios.png
//
// also draws the comparison's limit, requests in flight and p99 of each
// window over time, one line per strategy, and the limit of each strategy
// over each scenario. The pictures under docs are of the test's run, on
// the virtual clock, as the figures here are; from this directory,
//
//	../../scripts/standalone.sh go test -run TestAdaptive . -args -pictures ../../docs
//
// draws them again.
//
// # The experiment
//
// The server is a pool of workers, each serving one request at a time in
// 10ms, its latency when nobody queues. It has four workers for 10s (400
// requests per second), then two for 10s (200/s), then six for 10s
// (600/s); a worker that goes finishes its request first. A request waits
// for a free worker, first come first served, for as long as its client
// waits. The work is a sleep, which needs no CPU, so the figures do not
// depend on the machine.
//
// The load is an open loop of 800 requests per second for the 30s, above
// the capacity in every phase: 24,000 requests, one at a random instant
// (from a seeded source) in each interval of 1.25ms, the same for every
// strategy. A client gives up after a second.
//
// The strategies, each in front of a server of its own:
//
//   - none: the bare server.
//   - static: LoadShed > ConcurrencyLimit(16), sized by Little's law for
//     the first phase: 400/s times a wait of four service times, 40ms.
//   - gradient2, vegas, aimd: LoadShed > adaptive.New with that algorithm,
//     every option at its default: the stack package adaptive's doc gives
//     for a server. Nothing is tuned for this server. AIMD moves on drops
//     alone, and as its doc says, a server gives it the mean latency above
//     which a window counts as one: AIMDTimeout of half the objective, a
//     number about the clients rather than the server.
//   - failsafe: failsafe-go v0.9.8's adaptivelimiter as its documentation
//     configures it (limits 1 to 100 from 20, recent window 1s to 30s and
//     50 samples, baseline window 10, queueing with rejection factors 2 and
//     3), a request waiting in its queue or rejected; see failsafeLimit.
//   - failsafe0: the same limiter without queueing, a request rejected
//     when it is full: the nearest to a LoadShed over a limit.
//
// platinummonkey/go-concurrency-limits is not in the comparison: the Go
// module proxy does not serve it (go list -m -versions answers 403).
//
// # The figures
//
// Each line counts the requests sent during the phase. goodput is the
// answers within the objective, 100ms (ten times the unloaded latency),
// per second, in percent of the phase's capacity. p50 and p99 are over the
// requests that were not shed: the latency of their answer, from the
// instant each was due, or the second after which its client gave up. A
// shed request gets its answer at once, and counts in shed, the percent
// of requests turned away.
//
// settle is how long after the phase's start (the run's start for phase 1,
// the change of capacity for the others) the p99 is within the objective
// and stays there: the p99 of the requests sent in a window of 500ms,
// slid by 10ms, is within the objective for every window from then until
// the last that ends 100ms before the phase does (a request sent later
// may meet the next phase's capacity within its objective). never: the
// last window is above the objective.
//
// The targets, for each of ours: goodput at least 90% of the capacity and
// settle at most 2s in every phase, and goodput and p99 at least as good
// as each peer's (failsafe's and failsafe0's) in every phase. A line per
// algorithm says which it missed.
//
// # What the figures say
//
// Without a limit the queue for the workers grows by the load the server
// cannot take, until every request waits a second, its client gives up,
// and nothing is answered in time. Every limit sheds what is above the
// capacity: 50%, 75% and 25% of the load.
//
// The static limit of 16 suits every phase here: 16 in flight on two
// workers wait 80ms, within the objective, and on six they keep all six
// busy.
//
// Gradient2 and Vegas start with a probe, four requests at a quarter of
// the limit (the fifth place is critical priority's), which measures the
// no-load latency, 10ms, in 14ms. While the limit settles their windows
// are short, a tenth of a second; and a run of five timed calls twice as
// slow as the last window ends one at once. The first loaded window, 20
// in flight on four workers, ends so 40ms later, and they fall by
// Little's law: Gradient2 to 13 at 54ms, 7 at 0.25s and 6 at 2.4s, Vegas
// to 15 and then 10 at 0.15s: 5 and 9 requests in flight, at a p50 of
// 11ms and 20ms. The first phase's p99, 27ms and 30ms, is that first
// quarter second's. When the capacity halves, a run of calls at 28ms
// (Gradient2) and 47ms (Vegas) ends the window 150ms and 130ms after the
// change; Gradient2 falls by Little's law, to 3, then 5, then 4, and
// Vegas, whose latency jumped past 3 times the no-load latency, probes,
// and falls to 8 (its queue of about 6 beyond the two workers) 180ms
// after the change. When it triples, a run of calls faster by a quarter
// than the window before, at the same limit, ends the window 33ms and
// 22ms after the change: callers are blocked at a limit that shows no
// queueing, and Gradient2's limit doubles, from 4 to 9, a slow start;
// Vegas's goes from 8 to 9, then to 10 at 0.12s. Both meet the targets
// in every phase, at p99s of 14ms to 40ms, less than half failsafe0's. On
// six workers Gradient2's limit of 9, 8 in flight, keeps latency at 1.24
// times the no-load latency, and Vegas's of 10 at 1.43 times.
//
// AIMD, with its threshold at 50ms, adds one a second while the mean
// latency is below it and takes a tenth off when it is above: its limit
// saws around the concurrency that makes 50ms, and meets the targets. With
// Netflix's default threshold, 5s, it would see no drop before the
// clients' second, and its 30 or so in flight on two workers would wait
// 150ms.
//
// failsafe-go's limiter queues up to two to three times its limit in
// front of it, and its limit, 20 to 30, is already all a server of two to
// six workers can hold within the objective: its requests wait for the
// limit, then for a worker, 140ms to 520ms in all. Without the queue
// (failsafe0) it does well while the capacity is 400/s and 600/s, though
// its limit climbs to 29 in the first phase; in the second its limit comes
// down only to 22, whose 110ms of waiting on two workers it takes for its
// new baseline, and little is answered in time.
//
// # The scenarios
//
// Five more runs, each a situation that the comparison's phases do not
// test and package adaptive's behaviour tests do. Each runs Gradient2 and
// Vegas with the package's defaults (AIMD too where drops are the
// question), under a LoadShed unless it says otherwise, beside
// failsafe-go's limiter with its queue (failsafe) and without
// (failsafe0), configured as above, each strategy in front of a server of
// its own. Goodput counts the answers within the objective, 100ms, still:
// it is the clients' number, which does not change when the server does.
// Our limits are read as the algorithm leaves them after each window,
// apart from the probes at a quarter of it that measure the no-load
// latency: a probe lasts until it has timed as many calls as normal
// priority may have in flight at its limit (4 at a limit of 5, 2 at 3),
// and requests beyond its limit are shed meanwhile, which is what it
// costs.
// Under each table a line per algorithm of ours names the figures on
// which a failsafe-go variant did better.
//
// The first starts every limiter under overload, so that its first loaded
// window is already queued. static20 is the limit that a baseline taken
// from that window holds: 20 in flight on eight workers take 25ms, which
// such a baseline reads as no queueing.
//
//	Started under overload: 8 workers of 10ms (800/s), offered 1600/s from the first instant for 10s.
//	settled: from then on the limit is within 9-16; limit and queued (mean, beyond the workers): from 2s;
//	p99 in 1st s: requests sent in the first second; the rest: requests sent from 1s.
//	strategy   settled  limit  queued  p99 in 1st s  goodput  p50    p99    shed
//	gradient2  100ms    14     4.0     21ms          100%     13ms   17ms   50%
//	vegas      100ms    14     4.0     21ms          100%     13ms   17ms   50%
//	static20   never    20     12.0    27ms          100%     22ms   27ms   50%
//	failsafe   never    22-29  18.2    97ms          16%      113ms  130ms  50%
//	failsafe0  never    22-29  18.2    28ms          100%     30ms   37ms   50%
//	gradient2 against failsafe-go: ahead or even on every figure
//	vegas against failsafe-go: ahead or even on every figure
//
// Ours start with a probe, which measures the no-load latency, 10ms, in
// 12ms. Their first loaded window, 20 in flight, takes 21ms a call, and a
// run of five such calls, twice the probe's, ends it 50ms from the start:
// they fall by Little's law to 14 (Gradient2) and 15 (Vegas, 14 a short
// window later, at 150ms): 12 requests in flight, the reserve for higher
// priorities aside, 4 of them waiting for a worker, at a p99 of 17ms, 1.7
// times the service time. The table reads the limit every 100ms, hence
// settled at 100ms; the requests of the first second have a p99 of 21ms.
// static20 keeps 12 waiting, at a p99 of 27ms. failsafe-go's limit grows
// from 20 to 29, 18 waiting for a worker, at a p99 of 37ms without its
// queue and 130ms with it, where most answers come after the objective.
//
// The next two change the server at 10s and back at 20s. A stage's limit
// has settled when it is within its workers' band for good: 9 to 16 for
// eight (eight busy with normal priority, the reserve of one aside, and
// at most as many waiting), 2 to 8 for two, below eight's band; these are
// the bands of package adaptive's behaviour tests. The swing is how far
// the limit moves at steady load.
//
//	A capacity drop and return: 8 workers of 10ms, 2 from 10s, 8 again from 20s; offered 1600/s.
//	settled: from the stage's start until the limit is within its workers' band for good (eight: 9-16, two: 2-8);
//	limit and swing ((most-least)/least): over the stage's last 5s; the rest: requests sent in the stage.
//	strategy   stage       settled  limit  swing  goodput  p50    p99    shed
//	gradient2  8 workers   100ms    14     0%     100%     16ms   17ms   50%
//	gradient2  2 from 10s  200ms    4      0%     100%     17ms   32ms   88%
//	gradient2  8 from 20s  300ms    13     0%     100%     13ms   18ms   50%
//	vegas      8 workers   100ms    14     0%     100%     16ms   17ms   50%
//	vegas      2 from 10s  200ms    8      0%     100%     30ms   44ms   87%
//	vegas      8 from 20s  100ms    14     0%     100%     14ms   17ms   50%
//	failsafe   8 workers   never    25-29  16%    25%      111ms  149ms  49%
//	failsafe   2 from 10s  never    20-23  15%    0%       439ms  533ms  88%
//	failsafe   8 from 20s  never    23-28  22%    45%      103ms  127ms  50%
//	failsafe0  8 workers   never    25-29  16%    100%     30ms   37ms   50%
//	failsafe0  2 from 10s  never    20-23  15%    30%      110ms  139ms  88%
//	failsafe0  8 from 20s  never    23-28  22%    100%     27ms   36ms   50%
//	gradient2 against failsafe-go: ahead or even on every figure
//	vegas against failsafe-go: ahead or even on every figure
//
// When six workers go, a run of five calls at 35ms, more than twice the
// last window's 15ms, ends the window 74ms after the change; the jump
// calls for a probe, which confirms the no-load latency at 134ms, and
// both limits fall at once, into the two workers' band: Gradient2's to 6,
// then 3 and 5, and 4 from 0.54s, whose 3 in flight keep latency within
// its tolerance, 1.5 times the no-load latency; Vegas's to 8, its queue
// of about 6 beyond the workers, at 3.5 times the no-load latency. Their
// p99s are 32ms and 44ms. They serve the two workers' capacity, where
// failsafe-go's limit comes down by one a second, to 20 at 17s, about 20
// waiting on two workers, and answers 30% of it within the objective
// without its queue and nothing with it.
//
// When the workers come back, a run of calls faster by a quarter than
// the window before, at the same limit, ends the window 30ms and 22ms
// after the change: callers are blocked at a limit that shows no
// queueing, and the limits double, a slow start. Vegas's goes from 8 to
// 16, then 15, and 14 at 22.2s; Gradient2's from 4 to 9 and 18, above the
// band for 100ms, falls back to 16 when latency shows the queue, and a
// probe at 21.4s leaves it at 13. Both serve the stage's capacity, at
// half failsafe0's p99. Every swing of ours at steady load is 0%;
// failsafe-go's are 15% to 22%.
//
//	A service 4x slower, then fast again: 8 workers of 10ms, 40ms from 10s, 10ms again from 20s; offered 1600/s.
//	settled: from the stage's start until the limit is within its workers' band for good (eight: 9-16, two: 2-8);
//	limit and swing ((most-least)/least): over the stage's last 5s; the rest: requests sent in the stage.
//	strategy   stage          settled  limit  swing  goodput  p50    p99    shed
//	gradient2  10ms           100ms    14     0%     100%     16ms   17ms   50%
//	gradient2  40ms from 10s  0s       14     0%     100%     42ms   77ms   88%
//	gradient2  10ms from 20s  0s       14     0%     100%     12ms   17ms   50%
//	vegas      10ms           100ms    14     0%     100%     16ms   17ms   50%
//	vegas      40ms from 10s  0s       14     0%     100%     42ms   77ms   88%
//	vegas      10ms from 20s  0s       14     0%     100%     12ms   17ms   50%
//	failsafe   10ms           never    25-29  16%    25%      111ms  177ms  49%
//	failsafe   40ms from 10s  never    20-23  15%    0%       436ms  544ms  88%
//	failsafe   10ms from 20s  never    22-27  23%    55%      97ms   121ms  50%
//	failsafe0  10ms           never    25-29  16%    100%     30ms   37ms   50%
//	failsafe0  40ms from 10s  never    21-24  14%    15%      119ms  156ms  88%
//	failsafe0  10ms from 20s  never    23-28  22%    100%     29ms   36ms   50%
//	gradient2 against failsafe-go: ahead or even on every figure
//	vegas against failsafe-go: ahead or even on every figure
//
// Latency jumps to four times the no-load latency, and a run of calls
// that slow ends the window; the probe that the jump calls for measures
// 40ms, and the limit stays where it was: the eight workers take as many
// requests at once as before, each for four times as long. Ours answer
// the capacity, 200 a second, within the objective, at a p99 of 77ms;
// failsafe-go's limit comes down to 20 to 24, and its p99 is 156ms
// without its queue (15% within the objective) and 544ms with it. Within
// the clients' second, ours answer 1,994 requests of the stage's 2,000
// and failsafe0 1,993: the probe, at a quarter of the limit, lasts 80ms.
// When the service is fast again, a run of faster calls ends the window,
// a window faster than the no-load latency calls for another probe, and
// the limits stay at 14, serving the capacity at less than half
// failsafe0's p99.
//
// The fourth has no LoadShed, so that callers wait in the limiter's
// queue, and sends a spike of low-priority requests, twelve times the
// normal ones, for 3s. AIMD is here too, with the comparison's threshold
// of 50ms: it moves on drops, and a deadline spent waiting in the limiter
// is not the dependency's drop. answered/s is the dependency's useful
// work: answers in the spike's 3s that came in time for their client, of
// any priority. The p99s count the requests refused too: without a
// LoadShed, ours refuse a waiter that has waited twice the dependency's
// typical latency, or once it if the queue stands (has not emptied for
// that long), and then serve the newest waiter first (see package
// adaptive's doc, Waiting for a permit).
//
//	A low-priority spike without a LoadShed: 8 workers of 10ms (800/s); 400/s of normal priority for 12s, and 4800/s of low
//	priority from 4s to 7s, each with a deadline of 1s. limit: from 2s; answered/s: answers in the spike, all priorities;
//	within 100ms/s: those of them that came within 100ms of their request; the rest: requests sent in it, p99 over all of them,
//	refused ones too.
//	strategy   limit  answered/s  within 100ms/s  normal answered  normal p99  low answered  low p99
//	gradient2  14-20  798         798             100%             17ms        8%            20ms
//	vegas      15-30  798         798             100%             18ms        8%            20ms
//	aimd       20-25  798         798             100%             27ms        8%            24ms
//	failsafe   22-26  798         30              15%              127ms       16%           127ms
//	failsafe0  22-26  798         798             12%              34ms        16%           35ms
//	gradient2 against failsafe-go: ahead or even on every figure
//	vegas against failsafe-go: ahead or even on every figure
//	aimd against failsafe-go: ahead or even on every figure
//
// Every limit keeps the eight workers busy through the spike. Ours never
// fall below 14 (AIMD 20) and answer every normal request, at a p99 of
// 17ms and 18ms (AIMD 27ms), where failsafe-go, which knows no priorities
// here, answers 12% to 16% of either. The low ones take what is left:
// their queue stands from the spike's first instants, the newest low
// waiter goes first, and one that has waited the typical latency, about
// 13ms, is refused. So every low request has its answer or its refusal
// within 20ms (AIMD 24ms), to failsafe0's 35ms and failsafe's 127ms, and
// 798 answers a second come in time, as for failsafe-go. (Vegas's limit
// doubles to 30 as the spike ends: a run of calls at the no-load latency
// ends a window in which callers were blocked. With the load below half
// of it, it stays there.)
//
// Both rates count answers given in the spike's three seconds, whenever
// their request was sent: counting instead the answers to the requests
// sent in it would count those in flight at its end, answered after it,
// and reward a limit for holding more of them (failsafe0's 26 on eight
// workers, to Gradient2's 19). Ours keep latency within 1.5 times the
// no-load latency, and so fewer requests in flight, at the p99s above.
// Waiting to the deadline (adaptive.WithWaitToDeadline) costs far more:
// package adaptive's behaviour test of this spike answers 2,154 requests
// in it that way, to 2,396, and its low requests' p99 is a second.
// failsafe-go's PriorityLimiter, which rejects lower priorities first, is not in the comparison: like its
// queue, it draws from math/rand's global source, which no program can
// seed, and the test checks the figures exactly.
//
// The last makes the process itself the bottleneck: the requests queue
// for its two cores, not for the dependency. Ours are told how long
// requests waited for a core (adaptive.WithOwnDelay, fed by the
// simulation's own count, as in package adaptive's behaviour test of it,
// whose times are a twentieth of these); gradient2 untold is Gradient2
// without it. failsafe-go's limiter stands alone, with its queue and
// without, as in the other scenarios.
//
//	The process as the bottleneck: 64 callers in a closed loop for 10s through LoadShed > limiter (failsafe-go's alone);
//	each request takes 1ms of 2 cores before and after a dependency that answers in 20ms, a shed one 1ms. Ours are told the
//	cores' queue (WithOwnDelay), gradient2 untold is not. answered: the share of requests not shed; the rest: over the whole run.
//	strategy          limit   limit in last s  requests  answered  answered in last s  answered/s  p50   p99
//	gradient2         20-129  129              10122     98%       100%                996         63ms  63ms
//	vegas             20-128  128              10122     98%       100%                996         63ms  63ms
//	gradient2 untold  19-137  126-137          13086     53%       100%                699         63ms  80ms
//	failsafe          20-30   29-30            9924      100%      100%                992         63ms  69ms
//	failsafe0         20-30   29-30            16763     20%       24%                 331         76ms  79ms
//	gradient2 against failsafe-go: ahead or even on every figure
//	vegas against failsafe-go: ahead or even on every figure
//
// Untold, Gradient2 reads the cores' queue as the dependency's and holds
// at 19 to 20 for 3.3s, shedding most requests; then a probe, which its
// latency above the tolerance for three windows called for, meets the
// cores' queue too and takes 82ms for the no-load latency, after which no
// window shows queueing, and with callers blocked its limit doubles, to 78
// by 3.7s: it answers 53% of the requests. Told, ours never lower the
// limit on latency: their first probe, at a limit of 5, takes 53ms, 49ms
// of it the cores' queue, with callers shed meanwhile, so the process,
// not the dependency, held even a quarter of the limit back, and the
// limit quadruples at once, to 80 at 53ms, more than the 64 callers;
// after that no request is shed, and it grows by its headroom while the
// load reaches half of it, to 129. failsafe0 grows by one a second and
// answers 24% of the last second's requests.
//
// failsafe, whose queue makes callers wait instead of shedding, answers
// every request from the start, as many as the cores can take: 992 a
// second, at a p99 of 69ms. Ours answer 996 a second at a p99 of 63ms:
// they shed callers only in their first 53ms, each shed caller taking a
// core for 1ms, and from then on hold all 64 callers in flight with no
// queue of their own in front of the cores.
//
// # The test
//
// main_test.go runs the same program on synctest's virtual clock and
// checks every line it prints exactly. The run is the same every time, at
// any GOMAXPROCS, because nothing in it depends on which of two
// goroutines that wake at one instant runs first: the server's workers
// change by the virtual instants a request starts and ends at, and
// workers that come back are free a nanosecond apart; the failsafe-go
// limiter's queue draws from a seeded source; callers that a limiter lets
// out of its queue at one instant go on nanoseconds apart, in the order
// they came (see untie); and in the closed loop each caller acts only at
// instants of its own (see cores.sleepUntil).
package main
