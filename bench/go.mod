module github.com/towergo/tower/bench

go 1.26.0

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/go-kit/kit v0.13.0
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/towergo/tower v0.1.0
	github.com/towergo/tower/towerredis v0.1.0
	golang.org/x/time v0.16.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/grpc v1.83.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
