#!/usr/bin/env bash
# towerredis's fleet-wide rate limit on a real redis-server it starts on
# loopback: cost per request next to go-redis/redis_rate v10 on the same
# server, and a fleet of replicas sharing one limit, with and without
# batching (see README.md). About a minute; exits 1 if a target is missed.
#
#   ./bench/fleet.sh
#   ./bench/fleet.sh -rounds 7 -duration 10s -replicas 8 -rate 1000 -batch 8
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v redis-server >/dev/null; then
	echo "redis-server is not installed: apt-get install redis-server" >&2
	exit 2
fi
go run ./cmd/fleet "$@"
