// Compare reads the output of this module's benchmarks and of
// towerrs/run.sh, the Rust tower peer, and prints, for each stack, our
// figure next to Rust tower's and failsafe-go's, then a summary of the
// targets.
//
//	go run ./cmd/compare -go go.txt -tower tower.txt [-scaling scaling.txt]
//
// Each figure is the median of the runs in its file: go test -count N or
// several runs appended, and several runs of run.sh appended (each of which
// prints medians of 5 repetitions).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	goFile := flag.String("go", "", "output of go test -bench in this module")
	towerFile := flag.String("tower", "", "output of towerrs/run.sh")
	scalingFile := flag.String("scaling", "", "output of go test -bench Parallel -cpu 1,2 (optional)")
	adaptiveFile := flag.String("adaptive", "", "output of go test -bench '^Benchmark(Adaptive|Concurrency)$' ./adaptive (optional)")
	flag.Parse()
	if *goFile == "" || *towerFile == "" {
		flag.Usage()
		os.Exit(2)
	}
	goRuns := mustParse(*goFile, parseGo)
	tower := mustParse(*towerFile, parseTower)
	var scaling goResults
	if *scalingFile != "" {
		scaling = mustParse(*scalingFile, parseGo)
	}
	var adaptive goResults
	if *adaptiveFile != "" {
		adaptive = mustParse(*adaptiveFile, parseGo)
	}
	ok := report(os.Stdout, goRuns, tower, scaling, adaptive)
	if !ok {
		os.Exit(1)
	}
}

func mustParse[T any](name string, parse func(io.Reader) (T, error)) T {
	f, err := os.Open(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	return v
}

// goResults holds every run of every benchmark, by name without the -N
// GOMAXPROCS suffix, with that suffix kept apart: name -> procs -> runs.
type goResults map[string]map[int][]run

type run struct {
	ns     float64
	allocs float64
}

// parseGo reads go test -bench output.
func parseGo(r io.Reader) (goResults, error) {
	res := goResults{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name, procs := splitProcs(f[0])
		var rn run
		var seen bool
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", sc.Text(), err)
			}
			switch f[i+1] {
			case "ns/op":
				rn.ns, seen = v, true
			case "allocs/op":
				rn.allocs = v
			}
		}
		if !seen {
			continue
		}
		if res[name] == nil {
			res[name] = map[int][]run{}
		}
		res[name][procs] = append(res[name][procs], rn)
	}
	return res, sc.Err()
}

// splitProcs splits "BenchmarkX/y-2" into "BenchmarkX/y" and 2; a name
// without the suffix ran with GOMAXPROCS 1.
func splitProcs(s string) (string, int) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return s, 1
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s, 1
	}
	return s[:i], n
}

// parseTower reads run.sh's "<name> <ns>" lines, skipping comments, from
// one or more runs.
func parseTower(r io.Reader) (map[string][]float64, error) {
	res := map[string][]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", sc.Text(), err)
		}
		res[f[0]] = append(res[f[0]], v)
	}
	return res, sc.Err()
}

// median returns the median of the runs' field.
func median(runs []run, field func(run) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = field(r)
	}
	return medianOf(v)
}

// medianOf returns the median of v, which it sorts.
func medianOf(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func ns(r run) float64     { return r.ns }
func allocs(r run) float64 { return r.allocs }
