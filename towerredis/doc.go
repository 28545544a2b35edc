// Package towerredis holds limits shared by a whole fleet of replicas, kept
// in Redis. Start with [NewBucketLayer], a rate limit for the fleet, and
// [NewConcurrencyLayer], a limit on the fleet's requests in flight. A limit
// of 100 requests a second is 100 per replica in package limit, and 100 for
// the fleet here:
//
//	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
//	svc := stack.New[Req, Res]().
//		Layer(towerredis.NewBucketLayer[Req, Res](rdb, "api", 100, time.Second, 10)).
//		Layer(towerredis.NewConcurrencyLayer[Req, Res](rdb, "api", 20, 30*time.Second)).
//		Service(backend)
//
// The client must have ContextTimeoutEnabled, or the constructors panic:
// go-redis would ignore each round trip's deadline, and a Redis that hangs
// would hang Ready.
//
// [Bucket] is a token bucket (GCRA, in one atomic Lua script on Redis's
// clock, so the replicas' clocks do not matter); [Keyed] is one bucket per
// key drawn from the request; [Concurrency] bounds the requests in flight,
// each holding a lease with a time to live, so that the leases of a replica
// that crashed come back by themselves. Ready waits as in package limit,
// bounded by ctx.
//
// Each round trip is bounded by [WithTimeout]; one that times out or fails
// leaves the request to the [FailMode], and the next request asks again.
//
// Every key begins with the prefix ([WithPrefix]) and carries a hash tag,
// so that the limits work on Redis Cluster: a Bucket's key is
// "{prefix:rate:name}" and a Concurrency's "{prefix:lease:name}", one slot
// each; a Keyed's for key k is "prefix:rate:name:{k}", so that keys spread
// over the nodes (a k holding '}' has its tag cut short there). Each script
// touches one key.
//
// Package [github.com/towergo/tower/towerredis/redistest] runs a real
// redis-server for tests.
package towerredis
