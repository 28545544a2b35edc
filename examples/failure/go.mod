module github.com/towergo/tower/examples/failure

go 1.26.0

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/towergo/tower v0.1.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/grpc v1.85.0 // indirect
)
