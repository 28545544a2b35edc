#!/usr/bin/env bash
# Rust tower's cost per request for the stacks of ../stacks_test.go, on this
# machine (see README.md). Builds offline, against the crates Debian
# packages, which it installs if they are missing.
#
#   ./run.sh            2,000,000 requests per repetition
#   ./run.sh 200000     a tenth of that: a quick look
#
# Prints "<name> <ns>" lines, each a median of 5 repetitions, which
# ../cmd/compare reads; lines starting with # are comments.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$HOME/.cargo/bin:$PATH"

registry=/usr/share/cargo/registry
if [ ! -d "$registry/tower-0.4.13" ] || [ ! -d "$registry/tokio-1.24.2" ]; then
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "# installing librust-tower-dev and librust-tokio-dev" >&2
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq librust-tower-dev librust-tokio-dev >/dev/null
fi

# The build goes outside the repository, so that a run leaves the tree as it
# found it.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/towergo-towerrs-target}"
cargo build --release --offline --locked --quiet

# version prints the version of crate $1 that Cargo.lock pins.
version() { awk -v name="\"$1\"" '$1 == "name" && $3 == name { getline; print $3 }' Cargo.lock | tr -d '"'; }
echo "# $(rustc -V), tower $(version tower), tokio $(version tokio)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs"
"$CARGO_TARGET_DIR/release/towerrs" "$@"
