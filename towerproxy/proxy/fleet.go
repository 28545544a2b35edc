package proxy

import (
	"net/http"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towerredis"
)

// This file is the proxy's only use of towerredis: the rate limits shared
// by a fleet of proxies.

// A fleet is the Redis server of the limits shared by a fleet of proxies,
// and its client. A reload that keeps the Redis section keeps it.
type fleet struct {
	cfg    Redis
	client *redis.Client
}

func newFleet(cfg *Redis) *fleet {
	return &fleet{cfg: *cfg, client: redis.NewClient(&redis.Options{Addr: cfg.Addr, ContextTimeoutEnabled: true})}
}

// fleetLimit returns rl as a limit of the fleet, kept in Redis under a
// name of its route's, so that every proxy of the fleet with the same
// route shares it: a token bucket per key, each in a Redis key of its
// own. A request over its key's rate is refused with a
// *limit.KeyLimitError, as the local limit refuses it, answered 429 with
// Retry-After. When Redis does not answer (within towerredis's 50ms), the
// limit admits the request, or with `fail: closed` refuses it with a
// *towerredis.UnreachableError, answered 503.
func (f *fleet) fleetLimit(route string, rl *RateLimit) tower.Service[*http.Request, towerhttp.Response] {
	mode := towerredis.FailOpen
	if f.cfg.Fail == "closed" {
		mode = towerredis.FailClosed
	}
	return towerredis.NewKeyed(admitted, f.client, "towerproxy:"+route, keyOf(rl.Key), rl.Rate.N, rl.Rate.Per, rl.Burst,
		towerredis.WithFailMode(mode))
}

// close closes the client, once no limit uses it.
func (f *fleet) close() { f.client.Close() }
