package reconnect

import "github.com/towergo/tower"

// MakeService is a service that makes services: given a target (an
// address, a shard, a config), its Call returns a new service of requests
// Req and responses Res for it. It is tower's MakeService.
//
// It is an alias, not a new interface, so a maker is an ordinary
// [tower.Service] and composes with every layer: a timeout on connecting
// (timeout.New over the maker), a limit on connects in flight, a rate of
// connects, a retry of failed connects. Readiness works as for any service:
// Ready waits until the maker can start one more connect.
type MakeService[Target, Req, Res any] = tower.Service[Target, tower.Service[Req, Res]]

// MakeFunc adapts a function that makes a service for a target to a
// [MakeService] that is always ready, as [tower.ServiceFunc] does for any
// service:
//
//	dial := reconnect.MakeFunc[string, Req, Res](func(ctx context.Context, addr string) (tower.Service[Req, Res], error) {
//		conn, err := d.DialContext(ctx, "tcp", addr)
//		if err != nil {
//			return nil, err
//		}
//		return newClient(conn), nil
//	})
//
// ctx bounds the connect; see [Reconnect] for the ctx it gets.
type MakeFunc[Target, Req, Res any] = tower.ServiceFunc[Target, tower.Service[Req, Res]]
