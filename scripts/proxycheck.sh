#!/usr/bin/env bash
# proxycheck.sh proves that the library modules work as a user meets them:
# it builds the file-based module proxy from the repository (HEAD, at the
# version the go.mod files require; scripts/modproxy), then, for the core
# and each adapter, makes a fresh module in a temporary directory outside
# the repository, runs go get of the module from that proxy with
# GOWORK=off and GOFLAGS=-mod=mod, as a user's go get would from a public
# one, and builds and runs a small program against it, whose output must
# be scripts/modproxy/testdata/user/NAME/want.txt. A go.mod with a replace
# directive, or an import of another module's internal package, stops the
# proxy's build, and so the check.
#
# TOWER_PROXY, if set, is a proxy built already; otherwise one is built.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${TOWER_PROXY:-}" ]; then
	TOWER_PROXY=$tmp/proxy
	(cd "$root/scripts/modproxy" && GOWORK=off GOFLAGS=-mod=readonly go run . -o "$TOWER_PROXY" >/dev/null)
fi
# The version HEAD is served as, and the libraries in the order a release
# tags them, from the tool.
version=$(cat "$TOWER_PROXY/HEAD")
libraries=$(cd "$root/scripts/modproxy" && GOWORK=off GOFLAGS=-mod=readonly go run . -libraries)

export GOWORK=off GOFLAGS=-mod=mod
export GOPROXY="file://$TOWER_PROXY,$(go env GOPROXY)"
export GONOSUMDB="github.com/towergo/tower${GONOSUMDB:+,$GONOSUMDB}"
# Not the module index of an earlier HEAD's contents (see standalone.sh).
export GODEBUG="goindex=0${GODEBUG:+,$GODEBUG}"
while read -r dir path prefix; do
	name=$(basename "$path")
	mod=$tmp/user-$name
	mkdir -p "$mod"
	cp "$root/scripts/modproxy/testdata/user/$name/main.go" "$mod/"
	(
		cd "$mod"
		go mod init example.com/usercheck >/dev/null 2>&1
		go get "github.com/towergo/tower@$version" "$path@$version" 2>&1 | grep -v '^go: \(downloading\|added\)' || true
		go build -o prog .
		./prog >out.txt
		if ! diff -u "$root/scripts/modproxy/testdata/user/$name/want.txt" out.txt; then
			echo "proxycheck: $path: the program's output differs (above)" >&2
			exit 1
		fi
		echo "proxycheck: $path@$version: go get, build and run in a fresh module: ok ($(go list -m github.com/towergo/tower | tr ' ' @))"
	)
done <<<"$libraries"
