module github.com/towergo/tower

go 1.26.0
