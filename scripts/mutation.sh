#!/usr/bin/env bash
# Mutation testing of the library's packages with gremlins, pinned: each
# mutant (a comparison turned around, a + made a -, a condition negated)
# must fail a test. Prints a line per package with its efficacy (killed /
# (killed + lived)) and mutant coverage ((killed + lived) / mutants), and
# exits 1 if a package is below the targets.
#
#   ./scripts/mutation.sh                      # every library package: hours on 2 cores
#   ./scripts/mutation.sh limit retry          # some of them, by directory
#   ./scripts/mutation.sh --changed origin/main # those a change touched
#
# A mutant that cannot change behaviour (an equivalent mutant), or one that
# gremlins cannot reach (a constant expression, which no test run covers),
# is listed with the reason in scripts/mutation-equivalent.txt, as
# "dir/file:line:column MUTATOR reason"; it does not count at all.
set -euo pipefail
cd "$(dirname "$0")/.."
unset GOWORK

version=v0.6.0
min_efficacy=95
min_coverage=90
tools=$(go env GOPATH)/bin
GOBIN=$tools go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version" 2>/dev/null
gremlins=$tools/gremlins
equivalent=$PWD/scripts/mutation-equivalent.txt
standalone=$PWD/scripts/standalone.sh
# Mutants run MUTATION_WORKERS at a time, 2 by default. gremlins's own
# output, a line per mutant as it is decided, is appended to MUTATION_LOG
# if set, to follow a long run (tail -f).
workers=${MUTATION_WORKERS:-2}
log=${MUTATION_LOG:-/dev/null}
report=$(mktemp)
trap 'rm -rf "$report"' EXIT

# library lists the directories of the library's packages: those of every
# module but the examples, the benchmarks and the test helpers' tests.
library() {
	find . -name '*.go' -not -name '*_test.go' \
		-not -path './examples/*' -not -path './bench/*' -not -path './.git/*' \
		-exec dirname {} \; | sort -u | sed 's|^\./||'
}

# adapters are the library's modules of their own (towergrpc, towerotel,
# towerredis): every go.mod below the root but the examples' and bench's.
adapters=$(find . -mindepth 2 -name go.mod -not -path './examples/*' -not -path './bench/*' -not -path './.git/*' \
	-exec dirname {} \; | sed 's|^\./||')

dirs=()
if [ "${1:-}" = "--changed" ]; then
	base=${2:?--changed needs a commit to compare with}
	for d in $(library); do
		if ! git diff --quiet "$base" -- "$d"/*.go 2>/dev/null; then
			dirs+=("$d")
		fi
	done
elif [ $# -gt 0 ]; then
	dirs=("$@")
else
	mapfile -t dirs < <(library)
fi

status=0
printf '%-22s %8s %6s %9s %7s %9s %8s\n' package killed lived uncovered mutants efficacy coverage
for d in "${dirs[@]}"; do
	# The module the directory belongs to, and the directory inside it.
	mod=.
	for m in $adapters; do
		case $d in "$m" | "$m"/*) mod=$m ;; esac
	done
	rel=${d#"$mod"}
	rel=.${rel:+/${rel#/}}
	[ "$d" = . ] && rel=.
	# No --test-cpu: gremlins v0.6.0 hands it to go test as one argument,
	# "-cpu 1", which the test binary refuses, and counts that failure as a
	# killed mutant.
	args=(unleash --workers "$workers" --timeout-coefficient 20 --output "$report")
	# The root of a module holds other packages below it: only its own files.
	if [ "$rel" = . ]; then
		args+=(--exclude-files '^[^/]+/')
	fi
	# gremlins copies the module's directory alone: through
	# scripts/standalone.sh, with GOWORK=off, the repository's own modules
	# come from the local proxy, and go.mod and go.sum from copies at
	# absolute paths, which hold for the copy gremlins tests in.
	out=$(cd "$mod" && "$standalone" "$gremlins" "${args[@]}" "$rel" 2>&1 | tee -a "$log") || true
	# mutants_of lists "file:line:column MUTATOR" for the mutants of a status
	# that count against the targets, the listed equivalent ones left out.
	mutants_of() {
		{ echo "$out" | grep -E "^ +$1 " || true; } | sed -E "s/^ +$1 +([A-Z_]+) at (.*)\$/\2 \1/" |
			while read -r where mutator; do
				if [ -f "$equivalent" ] && grep -qF "$d/$where $mutator " "$equivalent"; then
					continue
				fi
				echo "$where $mutator"
			done
	}
	lived=$(mutants_of LIVED)
	uncovered=$(mutants_of 'NOT COVERED')
	count() { [ -n "$1" ] && echo "$1" | wc -l || echo 0; }
	killed=$(echo "$out" | grep -cE '^ +(KILLED|TIMED OUT) ' || true) # a mutant that hangs the tests is caught
	nlived=$(count "$lived")
	notcov=$(count "$uncovered")
	mutants=$((killed + nlived + notcov))
	if [ "$mutants" -eq 0 ]; then
		printf '%-22s %8s\n' "$d" "no mutants"
		continue
	fi
	eff=100
	[ $((killed + nlived)) -gt 0 ] && eff=$(awk "BEGIN { printf \"%.1f\", 100*$killed/($killed+$nlived) }")
	cov=$(awk "BEGIN { printf \"%.1f\", 100*($killed+$nlived)/$mutants }")
	printf '%-22s %8d %6d %9d %7d %8s%% %7s%%\n' "$d" "$killed" "$nlived" "$notcov" "$mutants" "$eff" "$cov"
	[ -n "$lived" ] && echo "$lived" | sed "s|^|    lived: $d/|"
	[ -n "$uncovered" ] && echo "$uncovered" | sed "s|^|    not covered: $d/|"
	# A timed-out mutant counts as killed, but a busy machine can time out a
	# mutant the tests would not have caught: each is listed, to check by hand.
	{ echo "$out" | grep -E '^ +TIMED OUT ' || true; } | sed -E "s|^ +TIMED OUT +([A-Z_]+) at (.*)\$|    timed out: $d/\2 \1|"
	if awk "BEGIN { exit !($eff < $min_efficacy || $cov < $min_coverage) }"; then
		status=1
	fi
done
exit $status
