#!/usr/bin/env bash
# Our stacks, failsafe-go's and go-kit's, and Rust tower's, measured in one
# go on this machine, then compared line by line (see README.md).
#
#   ./bench/compare.sh            # about 3 minutes on a 2-core machine
#   TOWER_RS=path/to/run.sh ./bench/compare.sh
#
# Go figures are medians of 5 runs (go test -count 5); tower's run.sh prints
# medians of 5 repetitions itself. Exits 1 if a target is missed.
set -euo pipefail
cd "$(dirname "$0")"
tower_rs=${TOWER_RS:-../../shared/bench/tower-rs/run.sh}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "# go: $(go version), $(nproc) CPUs" >&2
go test -run '^$' -bench . -benchmem -count 5 >"$out/go.txt"
echo "# scaling: -cpu 1,2" >&2
go test -run '^$' -bench 'Parallel$' -cpu 1,2 -count 5 ../limit ../buffer >"$out/scaling.txt"
echo "# tower: $tower_rs" >&2
"$tower_rs" >"$out/tower.txt"

go run ./cmd/compare -go "$out/go.txt" -tower "$out/tower.txt" -scaling "$out/scaling.txt"
