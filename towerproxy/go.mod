module github.com/towergo/tower/towerproxy

go 1.26.0

require (
	github.com/redis/go-redis/v9 v9.23.0
	github.com/towergo/tower v0.1.0
	github.com/towergo/tower/towerredis v0.1.0
	go.yaml.in/yaml/v3 v3.0.6
	google.golang.org/grpc v1.85.0
)
