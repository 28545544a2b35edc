#!/usr/bin/env bash
# Our stacks, failsafe-go's and go-kit's, and Rust tower's, measured on this
# machine in one go, then compared line by line (see README.md).
#
#   ./bench/compare.sh            # about 4 minutes on a 2-core machine
#   ROUNDS=7 ./bench/compare.sh
#   TOWER_RS=path/to/run.sh ./bench/compare.sh   # a peer that prints the same lines
#
# The Go benchmarks and the Rust peer, towerrs/run.sh, take turns, ROUNDS
# times, so that a machine that slows down for a while slows both sides
# alike; each figure is the median over the rounds (each of tower's is
# itself a median of 5 repetitions). Exits 1 if a target is missed.
set -euo pipefail
cd "$(dirname "$0")"
tower_rs=${TOWER_RS:-./towerrs/run.sh}
rounds=${ROUNDS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "# go: $(go version), $(nproc) CPUs; tower: $tower_rs; $rounds rounds" >&2
go test -c -o "$out/bench.test" .
for i in $(seq "$rounds"); do
	echo "# round $i" >&2
	"$out/bench.test" -test.run '^$' -test.bench . -test.benchmem >>"$out/go.txt"
	"$tower_rs" >>"$out/tower.txt"
done
echo "# scaling: -cpu 1,2" >&2
go test -run '^$' -bench '^Benchmark(Concurrency|Buffer)Parallel$' -cpu 1,2 -count 5 ../limit ../buffer >"$out/scaling.txt"
echo "# adaptive: its uncontended permit beside a ConcurrencyLimit's" >&2
go test -run '^$' -bench '^Benchmark(Adaptive|Concurrency)$' -benchmem -count 5 ../adaptive >"$out/adaptive.txt"

go run ./cmd/compare -go "$out/go.txt" -tower "$out/tower.txt" -scaling "$out/scaling.txt" -adaptive "$out/adaptive.txt"
