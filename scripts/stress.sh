#!/usr/bin/env bash
# stress.sh runs the tests of every module many times, with the race
# detector unless told not to, at several GOMAXPROCS and in a shuffled
# order, optionally beside a load that keeps the CPUs busy, and prints each
# test that failed with how many times it failed. A test under
# testing/synctest must give the same answer every time: a failure here is
# a flake to fix at its cause.
#
#	scripts/stress.sh [-n COUNT] [-cpu LIST] [-load none|burn|build]
#	                  [-norace] [-synctest] [-run REGEXP] [-skip REGEXP]
#	                  [-exclude REGEXP] [-timeout DURATION] [DIR...]
#
#	-n COUNT     runs of each test at each -cpu value (default 20), in
#	             rounds of at most 50 per test binary
#	-cpu LIST    GOMAXPROCS values, as go test's -cpu (default 1,2,4)
#	-load KIND   none (default); burn: one busy loop per CPU; build: a
#	             parallel build of the standard library, over and over.
#	             Either runs only while the tests do.
#	-norace      without the race detector: for a run that looks for
#	             answers that change with the schedule, where the tests
#	             have run under the detector already; about 4x faster
#	-synctest    only the packages whose tests use testing/synctest
#	-run REGEXP  only the tests that match, as go test's -run
#	-skip REGEXP not the tests that match, as go test's -skip
#	-exclude RE  not the packages whose import path matches RE
#	-timeout D   go test's -timeout for each package (default 60m)
#	DIR...       module directories (default: every module of go.work)
#
# Each module's packages run with GOWORK=off, as .ci/run runs them. The
# output is one line per failing test, "FAILS  TEST  PACKAGE", then a
# summary; the exit status is 1 if anything failed. The go test output is
# kept in $STRESS_LOG (default: a temporary file, named at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
unset GOWORK

count=20 batch=50 cpus=1,2,4 load=none race=-race only_synctest=0 run=. skip= exclude= timeout=60m
while [ $# -gt 0 ]; do
	case $1 in
	-n) count=$2; shift 2 ;;
	-cpu) cpus=$2; shift 2 ;;
	-load) load=$2; shift 2 ;;
	-norace) race=; shift ;;
	-synctest) only_synctest=1; shift ;;
	-run) run=$2; shift 2 ;;
	-skip) skip=$2; shift 2 ;;
	-exclude) exclude=$2; shift 2 ;;
	-timeout) timeout=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "stress.sh: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
case $load in none | burn | build) ;; *) echo "stress.sh: -load must be none, burn or build" >&2; exit 2 ;; esac

if [ $# -gt 0 ]; then
	modules=("$@")
else
	mapfile -t modules < <(go list -m -f '{{.Dir}}' | sed "s|^$PWD|.|")
fi

log=${STRESS_LOG:-$(mktemp -t stress.XXXXXX)}
: >"$log"

# The load, stopped when the script ends however it ends.
loaders=()
stop_load() {
	for pid in "${loaders[@]}"; do
		kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
	done
}
trap stop_load EXIT
start_load() {
	local n
	n=$(nproc)
	case $load in
	burn)
		for _ in $(seq "$n"); do
			setsid sh -c 'while :; do :; done' &
			loaders+=($!)
		done
		;;
	build)
		local cache
		cache=$(mktemp -d -t stress-build.XXXXXX)
		setsid sh -c "while :; do GOCACHE=$cache go build -a -p $n std >/dev/null 2>&1; done" &
		loaders+=($!)
		;;
	esac
}

# packages prints the packages of the module in the current directory that
# the run covers.
packages() {
	if [ $only_synctest = 0 ]; then
		go list ./...
	else
		go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
			awk '/ testing\/synctest( |$)/ { print $1 }'
	fi | { if [ -n "$exclude" ]; then grep -Ev -- "$exclude" || true; else cat; fi; }
}

# Each module runs alone through scripts/standalone.sh, with the
# repository's own modules from a local proxy built once here (or the one
# TOWER_PROXY names, as .ci/run's).
standalone=$PWD/scripts/standalone.sh
if [ -z "${TOWER_PROXY:-}" ]; then
	export TOWER_PROXY
	TOWER_PROXY=$(mktemp -d)
	trap 'stop_load; rm -rf "$TOWER_PROXY"' EXIT
	(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=readonly go run . -o "$TOWER_PROXY" >/dev/null)
fi

start=$(date +%s)
start_load
status=0
for m in "${modules[@]}"; do
	mapfile -t pkgs < <(cd "$m" && packages)
	[ ${#pkgs[@]} -gt 0 ] || continue
	echo "+ $m: ${#pkgs[@]} packages, -count=$count -cpu $cpus ${race:+$race }-shuffle=on, load $load" >&2
	# In rounds of at most $batch runs per test binary: the race detector
	# keeps memory for every goroutine a process ever started, so that
	# one binary running a package's tests a thousand times grows without
	# bound (limit's took 20 GB at -count=1000).
	for ((done = 0; done < count; done += batch)); do
		n=$((count - done < batch ? count - done : batch))
		(cd "$m" && "$standalone" go test $race -v -count="$n" -cpu "$cpus" -shuffle=on \
			-run "$run" -skip "$skip" -timeout "$timeout" "${pkgs[@]}") >>"$log" 2>&1 || status=1
	done
done
stop_load
elapsed=$(($(date +%s) - start))

# A package's verbose output ends with "ok  pkg" or "FAIL  pkg"; the
# failing tests are the "--- FAIL: Name" lines before it. A test binary
# that crashed (a panic, a deadlock in a bubble) says so in a "panic:" or
# "fatal error:" line: it is counted under the test running then.
awk '
	/^[ \t]*--- FAIL: / { fails[$3]++; next }
	/^=== RUN / { running = $3 }
	/^(panic: |fatal error: )/ && running != "" { crashed[running]++; running = "" }
	/^(ok|FAIL)[ \t]+[^ \t]+/ {
		for (n in fails) total[n "  " $2] += fails[n]
		for (n in crashed) { total[n " (crashed)  " $2] += crashed[n] }
		delete fails; delete crashed; running = ""
	}
	END { for (k in total) printf "%6d  %s\n", total[k], k }
' "$log" | sort -k2 >"$log.fails"

if [ -s "$log.fails" ]; then
	echo "FAILS  TEST  PACKAGE"
	cat "$log.fails"
	status=1
fi
runs=$(grep -c '^--- \(PASS\|FAIL\|SKIP\): ' "$log" || true)
echo "stress: ${#modules[@]} modules, $runs top-level test runs, $(wc -l <"$log.fails") failing tests, ${elapsed}s, load $load; log: $log" >&2
rm -f "$log.fails"
exit $status
