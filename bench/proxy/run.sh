#!/usr/bin/env bash
# towerproxy beside nginx, HAProxy, Caddy and Go's httputil.ReverseProxy,
# over the same Go backends on loopback, in the scenarios of issue 26: one
# line per (proxy, scenario), then the issue's targets, met or missed
# (see README.md).
#
#   ./bench/proxy/run.sh                 # about 8 minutes on a 2-core machine, and the build
#   QUICK=1 ./bench/proxy/run.sh         # a smoke check, about 3 minutes
#   SCENARIOS=overhead,slow1 PROXIES=nginx,towerproxy ./bench/proxy/run.sh
#   DURATION=20s WARMUP=3s CPUS=2 ./bench/proxy/run.sh
#   ./bench/proxy/run.sh -workdir /tmp/cells   # keep each cell's configuration and logs
#
# Installs what is missing of nginx, haproxy, caddy and wrk from Debian
# (as root, non-interactively), builds towerproxy and the bench's Go
# programs, and runs bench/cmd/proxybench with them. Exits 1 if a target
# is missed, 2 if the run itself failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

need=()
for pkg in nginx haproxy caddy wrk; do
	command -v "$pkg" >/dev/null || [ -x "/usr/sbin/$pkg" ] || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "# installing ${need[*]}" >&2
	sudo=""
	if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	# Debian's packages start nginx and caddy as services on ports 80
	# and 2019 as they install, unless policy-rc.d says no: say no for
	# the install, if nothing on the machine says it already.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' | $sudo tee $policy >/dev/null
		$sudo chmod +x $policy
		trap '$sudo rm -f $policy' EXIT
	fi
	apt=($sudo apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${need[@]}")
	"${apt[@]}" >/dev/null || { $sudo apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && "${apt[@]}" >/dev/null; }
	if [ -n "$policy" ]; then
		$sudo rm -f "$policy"
		trap - EXIT
	fi
fi
export PATH="$PATH:/usr/sbin:/sbin"

# A proxy offered twice what it can serve may hold thousands of
# connections, twice over (clients and backends).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
echo "# building towerproxy and the bench's programs" >&2
(cd "$root" && go build -o "$bin/towerproxy" ./towerproxy)
(cd "$root" && go build -o "$bin/floor" ./towerproxy/internal/floor)
(cd "$root/bench" && go build -o "$bin/" ./cmd/proxybench ./cmd/proxybackend ./cmd/goproxy)

args=(-backend "$bin/proxybackend" -goproxy "$bin/goproxy" -floor "$bin/floor" -towerproxy "$bin/towerproxy" -hz "$(getconf CLK_TCK)")
if [ -n "${QUICK:-}" ]; then
	args+=(-duration "${DURATION:-2s}" -warmup "${WARMUP:-1s}")
else
	args+=(-duration "${DURATION:-10s}" -warmup "${WARMUP:-2s}")
fi
if [ -n "${CPUS:-}" ]; then args+=(-cpus "$CPUS"); fi
if [ -n "${PROXIES:-}" ]; then args+=(-proxies "$PROXIES"); fi
if [ -n "${SCENARIOS:-}" ]; then args+=(-scenarios "$SCENARIOS"); fi
echo "# nginx $(nginx -v 2>&1 | sed 's|.*/||'), HAProxy $(haproxy -v | sed -n '1s/HAProxy version \([^ ]*\).*/\1/p'), Caddy $(caddy version | cut -d' ' -f1), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1,2), $(go version | cut -d' ' -f3)" >&2
"$bin/proxybench" "${args[@]}" "$@"
