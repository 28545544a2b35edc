package reconnect

import "github.com/towergo/tower"

// MakeService is a service that makes services: tower's MakeService. Given
// a target (an address, a shard, a config), its Call returns a new service
// of requests Req and responses Res for it; its Ready waits until the
// maker can start one more connect. Being an alias, a maker composes with
// every layer: a timeout on connecting, a limit on connects in flight.
type MakeService[Target, Req, Res any] = tower.Service[Target, tower.Service[Req, Res]]

// MakeFunc adapts a function that makes a service for a target to a
// [MakeService] that is always ready (see the package example).
type MakeFunc[Target, Req, Res any] = tower.ServiceFunc[Target, tower.Service[Req, Res]]
