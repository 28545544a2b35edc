#!/usr/bin/env bash
# apicheck.sh compares the API of each library module at HEAD with its last
# release, with golang.org/x/exp/cmd/apidiff at a pinned version, and fails
# on an incompatible change unless the version the go.mod files require
# (the next release; scripts/modproxy -check) allows one: a new major
# version, or, below v1, a new minor one. So a breaking change is a
# decision, written down as that version, and not an accident. A module
# with no tag yet has nothing to compare with, and passes, saying so.
set -euo pipefail
apidiff_version=v0.0.0-20261113113407-e3970619a1a4 # golang.org/x/exp
root=$(git rev-parse --show-toplevel)
cd "$root"
tools=$(go env GOPATH)/bin
GOWORK=off GOFLAGS= GOBIN=$tools go install "golang.org/x/exp/cmd/apidiff@$apidiff_version"
apidiff=$tools/apidiff
next=$(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=readonly go run . -check)
libraries=$(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=readonly go run . -libraries)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Each side is loaded as a user's build of that module would be, with
# GOWORK=off (scripts/standalone.sh), so that the packages of the other
# modules, whose paths are under the core's, are not taken for its; the
# proxy serves every version tagged, and HEAD's.
if [ -z "${TOWER_PROXY:-}" ]; then
	export TOWER_PROXY=$tmp/proxy
	(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=readonly go run . -o "$TOWER_PROXY" >/dev/null)
fi
standalone=$root/scripts/standalone.sh

# major and minor of vX.Y.Z, as "X Y".
mm() { local v=${1#v}; echo "${v%%.*} $(echo "$v" | cut -d. -f2)"; }
# breakable reports whether going from release $1 to $2 may break the API.
breakable() {
	read -r a b <<<"$(mm "$1")"
	read -r c d <<<"$(mm "$2")"
	[ "$c" -gt "$a" ] || { [ "$a" = 0 ] && [ "$c" = 0 ] && [ "$d" -gt "$b" ]; }
}

status=0
while read -r dir path prefix; do
	last=$(git tag --list "${prefix}v*" --sort=-v:refname | grep -E "^${prefix}v[0-9]+\.[0-9]+\.[0-9]+$" | head -1 || true)
	if [ -z "$last" ]; then
		echo "apicheck: $path: no release tagged yet: nothing to compare with"
		continue
	fi
	old=$tmp/old-${last//\//-}
	if [ ! -d "$old" ]; then
		mkdir -p "$old"
		git archive "$last" | tar -x -C "$old"
	fi
	# apidiff says, on standard error, which internal package it skips.
	(cd "$old/$dir" && "$standalone" "$apidiff" -m -w "$tmp/api" "$path" 2> >(grep -v '^Ignoring internal package' >&2))
	changes=$(cd "$dir" && "$standalone" "$apidiff" -m -incompatible "$tmp/api" "$path" 2> >(grep -v '^Ignoring internal package' >&2))
	if [ -z "$changes" ]; then
		echo "apicheck: $path: compatible with $last"
	elif breakable "${last#"$prefix"}" "$next"; then
		echo "apicheck: $path: incompatible with $last, as $next allows:"
		echo "$changes" | sed 's/^/	/'
	else
		echo "apicheck: $path: incompatible with $last, which the next release, $next, does not allow:" >&2
		echo "$changes" | sed 's/^/	/' >&2
		echo "	(a breaking change needs a new major version, or a new minor one below v1, required in every go.mod)" >&2
		status=1
	fi
done <<<"$libraries"
exit "$status"
