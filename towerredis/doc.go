// Package towerredis holds limits shared by a whole fleet of replicas, kept
// in Redis. Most users start with [NewBucketLayer], a rate limit for the
// fleet, and [NewConcurrencyLayer], a limit on the fleet's requests in
// flight. A limit of 100 requests a second is 100 per replica in package
// limit, and 100 for the fleet here:
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
// The limits are named as in package limit. [Bucket] is a token bucket
// (GCRA, in one atomic Lua script on Redis's clock, so the replicas' clocks
// do not matter); [Keyed] is one bucket per key drawn from the request;
// [Concurrency] bounds the requests in flight, each holding a lease with a
// time to live, so that the leases of a replica that crashed come back by
// themselves. Package limit's Rate, a fixed window, has no counterpart here.
// Ready waits as in package limit, bounded by ctx. [WithObserver] sees
// every round trip to Redis, and [WithMetrics] reports waiters, requests
// in flight and refusals.
//
// # When Redis does not answer
//
// Each round trip is bounded by [WithTimeout]. One that times out or fails
// leaves the request to the [FailMode]: FailOpen, the default, admits it;
// FailClosed refuses it at once with an [*UnreachableError], which answers
// [tower.IsOverloaded]. Neither waits for Redis, and neither breaks the
// limit: the next request asks Redis again.
//
// # Keys and Redis Cluster
//
// Every key begins with the prefix ([WithPrefix], "tower" by default) and
// carries a hash tag, so that the limits work on Redis Cluster: a Bucket is
// "{prefix:rate:name}" and a Concurrency "{prefix:lease:name}", one slot
// each; a Keyed's bucket for key k is "prefix:rate:name:{k}", so that many
// keys spread over the nodes. Each script touches one key, or keys of one
// tag.
//
// # Tests
//
// The tests run a real redis-server, on the real clock with every wait
// bounded, through package [github.com/towergo/tower/towerredis/redistest],
// which your tests can use too. The script always reads Redis's own
// clock (TIME); no test replaces it.
package towerredis
