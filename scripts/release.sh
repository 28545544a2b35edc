#!/usr/bin/env bash
# release.sh VERSION tags a release of the library modules at HEAD: the
# core as VERSION and each adapter as DIR/VERSION (towerredis/v0.1.0, as
# grpc-go's and opentelemetry-go-contrib's modules are tagged), in
# dependency order, the core first. It pushes nothing: it prints the push
# to run once the tags are checked.
#
# Before it tags anything it checks that the work tree is clean, that no
# tag of this version exists, that CHANGELOG.md has a section for it, and,
# through scripts/modproxy -check, that every go.mod requires the
# repository's own modules at exactly VERSION, that none has a replace
# directive, and that no module imports another's internal packages.
set -euo pipefail
if [ $# != 1 ] || ! [[ $1 =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]]; then
	echo "usage: scripts/release.sh vX.Y.Z" >&2
	exit 2
fi
version=$1
cd "$(git rev-parse --show-toplevel)"
if [ -n "$(git status --porcelain)" ]; then
	echo "release: the work tree has changes: commit them first" >&2
	exit 1
fi
if ! grep -q "^## \[${version#v}\]" CHANGELOG.md; then
	echo "release: CHANGELOG.md has no section \"## [${version#v}] - DATE\": move Unreleased's entries under it first" >&2
	exit 1
fi
required=$(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=readonly go run . -check)
if [ "$required" != "$version" ]; then
	echo "release: the go.mod files require this repository's modules at $required, not $version: require $version in each first" >&2
	exit 1
fi
libraries=$(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=readonly go run . -libraries)
tags=() paths=()
while read -r dir path prefix; do
	tag=$prefix$version
	if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
		echo "release: tag $tag exists already" >&2
		exit 1
	fi
	tags+=("$tag") paths+=("$path")
done <<<"$libraries"
for i in "${!tags[@]}"; do
	git tag -a -m "${paths[$i]} $version" "${tags[$i]}"
	echo "tagged ${tags[$i]}"
done
echo "nothing pushed; to publish: git push origin ${tags[*]}"
