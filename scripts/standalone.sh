#!/usr/bin/env bash
# standalone.sh runs a go command in the module of the current directory as
# a user's build of that module would see it: with GOWORK=off, so that its
# own go.mod decides, and with this repository's library modules
# (github.com/towergo/tower and its adapters, at the version the go.mod
# files require, which no public proxy has before it is released) served
# by a file-based module proxy that scripts/modproxy builds from HEAD.
#
#   scripts/standalone.sh go test -race ./...   # from a module's directory
#   scripts/standalone.sh tidy                  # go mod tidy, as committed
#   scripts/standalone.sh tidy -diff            # what tidy would change; exit 1 if anything
#
# go.sum files leave out the hashes of this repository's own modules: a
# version not tagged yet is built from HEAD, so its hash changes with every
# commit of the core, and a committed hash would have to follow it. So the
# go command runs on copies of go.mod and go.sum (GOFLAGS=-modfile=...),
# with -mod=mod, which lets it add those hashes to the copy of go.sum
# rather than refuse a missing one, and never writes the module's own
# files; tidy writes them back without those hashes.
#
# TOWER_PROXY, if set, is a proxy built already (as .ci/run builds one for
# all its commands); otherwise one is built in a temporary directory.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${TOWER_PROXY:-}" ]; then
	TOWER_PROXY=$tmp/proxy
	(cd "$(git rev-parse --show-toplevel)/scripts/modproxy" && GOWORK=off GOFLAGS=-mod=readonly go run . -o "$TOWER_PROXY" >/dev/null)
fi
own='^github\.com/towergo/tower[/ ]'
if [ -f go.sum ] && grep -Eq "$own" go.sum; then
	echo "$PWD/go.sum: holds hashes of this repository's own modules, which go.sum files leave out (see scripts/standalone.sh)" >&2
	exit 1
fi
cp go.mod "$tmp/go.mod"
if [ -f go.sum ]; then cp go.sum "$tmp/go.sum"; else : >"$tmp/go.sum"; fi
export GOWORK=off
export GOPROXY="file://$TOWER_PROXY,$(go env GOPROXY)"
export GONOSUMDB="github.com/towergo/tower${GONOSUMDB:+,$GONOSUMDB}"
# The go command indexes a module in its cache once and for all, in the
# build cache, by path and version, since a version's contents never
# change; HEAD's do, so the index of an earlier HEAD would hide files
# added since. scripts/modproxy evicts the modules themselves from the
# module cache; goindex=0 keeps the go command from reading a stale index.
export GODEBUG="goindex=0${GODEBUG:+,$GODEBUG}"
if [ "${1:-}" = tidy ]; then
	GOFLAGS="${GOFLAGS:+$GOFLAGS }-modfile=$tmp/go.mod" go mod tidy
	grep -Ev "$own" "$tmp/go.sum" >"$tmp/go.sum.mine" || true
	if [ "${2:-}" = -diff ]; then
		status=0
		diff -u go.mod "$tmp/go.mod" || status=1
		if [ -s "$tmp/go.sum.mine" ] || [ -f go.sum ]; then
			diff -u "${PWD}/go.sum" "$tmp/go.sum.mine" 2>/dev/null || { [ ! -f go.sum ] && [ ! -s "$tmp/go.sum.mine" ]; } || status=1
		fi
		if [ "$status" != 0 ]; then
			echo "$PWD: go mod tidy would change go.mod or go.sum (above); run scripts/standalone.sh tidy" >&2
		fi
		exit "$status"
	fi
	cp "$tmp/go.mod" go.mod
	if [ -s "$tmp/go.sum.mine" ]; then cp "$tmp/go.sum.mine" go.sum; else rm -f go.sum; fi
	exit 0
fi
GOFLAGS="${GOFLAGS:+$GOFLAGS }-modfile=$tmp/go.mod -mod=mod" "$@"
