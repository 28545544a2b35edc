package main

import (
	"strings"
	"testing"
)

const goOut = `goos: linux
BenchmarkTower/concurrency_limit-2         	22387786	        30.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTower/concurrency_limit-2         	22387786	        20.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTower/concurrency_limit-2         	22387786	        21.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTower/timeout-2                   	 7031452	       100.0 ns/op	      96 B/op	       1 allocs/op
BenchmarkTower/timeout_concurrency_limit-2 	 1804660	       150.0 ns/op	      96 B/op	       1 allocs/op
BenchmarkTower/rate_limit-2                	14079897	        60.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTower/buffer_16-2                 	16650835	        77.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTower/buffer_16_worker-2          	 3000000	       400.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkFailsafe/concurrency_limit-2      	 1488895	       803.4 ns/op	     352 B/op	      13 allocs/op
BenchmarkFailsafe/timeout-2                	  561122	      1993 ns/op	     808 B/op	      20 allocs/op
BenchmarkFailsafe/timeout_concurrency_limit-2         	  699810	      900 ns/op	     984 B/op	      23 allocs/op
BenchmarkFailsafe/rate_limit-2                        	  827059	      2236 ns/op	     600 B/op	      16 allocs/op
BenchmarkGoKit/rate_limit-2                           	 9991746	       118.8 ns/op	       0 B/op	       0 allocs/op
PASS
`

const towerOut = `# rustc 1.95.0
tower_timeout_ns 150.0
tower_timeout_ns 120.0
tower_timeout_ns 133.0
# tower_concurrency_limit_ns: n=2000000 reps=5 min=45.76 max=47.56
tower_concurrency_limit_ns 34.3
tower_timeout_concurrency_limit_ns 190.0
tower_rate_limit_ns 76.0
tower_buffer_16tasks_mt2_ns 436.0
tower_buffer_cl1_16tasks_mt2_ns 500.0
`

const scalingOut = `BenchmarkConcurrencyParallel     	 1000	        40.0 ns/op
BenchmarkConcurrencyParallel-2   	 1000	        50.0 ns/op
BenchmarkBufferParallel          	 1000	        60.0 ns/op
BenchmarkBufferParallel-2        	 1000	       100.0 ns/op
`

const adaptiveOut = `BenchmarkAdaptive-2      	 1000	        90.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkAdaptive-2      	 1000	        80.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkAdaptive-2      	 1000	       100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkConcurrency-2   	 1000	        40.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkConcurrency-2   	 1000	        50.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkConcurrency-2   	 1000	        45.0 ns/op	       0 B/op	       0 allocs/op
`

func TestReport(t *testing.T) {
	goRuns, err := parseGo(strings.NewReader(goOut))
	if err != nil {
		t.Fatal(err)
	}
	tower, err := parseTower(strings.NewReader(towerOut))
	if err != nil {
		t.Fatal(err)
	}
	scaling, err := parseGo(strings.NewReader(scalingOut))
	if err != nil {
		t.Fatal(err)
	}
	adaptive, err := parseGo(strings.NewReader(adaptiveOut))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	ok := report(&out, goRuns, tower, scaling, adaptive)
	want := `concurrency_limit go=21.0ns tower=34.3ns ratio=0.61 allocs=0 failsafe=803.4ns
timeout go=100.0ns tower=133.0ns ratio=0.75 allocs=1 failsafe=1993.0ns
timeout_concurrency_limit go=150.0ns tower=190.0ns ratio=0.79 allocs=1 failsafe=900.0ns
rate_limit go=60.0ns tower=76.0ns ratio=0.79 allocs=0 failsafe=2236.0ns
buffer_16 go=77.0ns tower=436.0ns ratio=0.18 allocs=0
buffer_16_worker go=400.0ns tower=500.0ns ratio=0.80 allocs=0

summary: Timeout > ConcurrencyLimit is 6.0x faster than failsafe-go's Timeout + Bulkhead (target 5x)
summary: go-kit endpoint + ErroringLimiter(x/time/rate) 118.8ns, 0 allocs
summary: BenchmarkBufferParallel per request on 2 CPUs / 1 CPU = 1.67 (target <= 1.5)
summary: BenchmarkConcurrencyParallel per request on 2 CPUs / 1 CPU = 1.25 (target <= 1.5)
summary: adaptive limit 90.0ns, 0 allocs, per request / ConcurrencyLimit 45.0ns = 2.00 (target <= 2.0, 0 allocs)
summary: MISSED BenchmarkBufferParallel: scaling 1.67 > 1.5
`
	if got := out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if ok {
		t.Error("report said every target was met, with one missed")
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		runs := make([]run, len(tt.in))
		for i, v := range tt.in {
			runs[i].ns = v
		}
		if got := median(runs, ns); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
