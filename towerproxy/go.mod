module github.com/towergo/tower/towerproxy

go 1.26.0

require (
	github.com/towergo/tower v0.1.0
	go.yaml.in/yaml/v3 v3.0.6
)
