// Package towerredis holds limits shared by a whole fleet of replicas, kept
// in Redis: a rate limit (GCRA, in one atomic Lua script, for the whole
// fleet or per key) and a concurrency limit whose permits are leases with a
// time to live, so that the permits of a replica that crashed come back by
// themselves. Both are tower layers whose Ready waits as the local limits
// of package limit do, bounded by ctx; each round trip to Redis is bounded
// by a timeout, and a [FailMode] says what a limit does when Redis does not
// answer.
//
// A limit of 100 requests a second in each of 8 replicas is 800 a second
// for the fleet; the same limit here is 100 for the fleet:
//
//	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
//	svc := tower.NewBuilder[Req, Res]().
//		Layer(towerredis.NewBucketLayer[Req, Res](rdb, "api", 100, time.Second, 10)).
//		Layer(towerredis.NewConcurrencyLayer[Req, Res](rdb, "api", 20, 30*time.Second)).
//		Service(backend)
//
// The client must have ContextTimeoutEnabled: the constructors panic
// otherwise, since go-redis would then ignore the deadline of each round
// trip and a Redis that hangs would hang Ready.
//
// # When Redis does not answer
//
// A round trip that gets no answer within the timeout ([WithTimeout]), or
// an error, leaves the request to the [FailMode]: FailOpen admits it, and
// FailClosed refuses it at once with an [*UnreachableError], which answers
// [tower.IsOverloaded]. Neither waits for Redis to come back, and neither
// breaks the limit for good: the next request asks Redis again. What a
// request costs during an outage, and how soon a go-redis client uses
// Redis again after it, are in FailMode's doc.
//
// # Rate limits
//
// [Bucket] is a token bucket for the fleet (the generic cell rate algorithm,
// as in go-redis/redis_rate, with the meaning of package limit's token
// bucket): the bucket's whole state is one key holding the instant it is
// full again, read and moved by one script on Redis's own clock, so the
// replicas' clocks do not matter, and the key expires when the bucket is
// full again. A caller that must wait reserves its token in the same round
// trip and sleeps until it: one round trip per request, waiting or not, and
// the fleet's waiters are served in the order they reach Redis.
// [Keyed] is the same per key drawn from the request (a tenant, a
// client address); the key is known only in Call, so its Ready is the
// inner service's and its wait, if any ([WithMaxWait]), happens in Call.
// It refuses with limit.Keyed's [*limit.KeyLimitError], so that a caller
// checks one error whichever backend refused. The limits are named as in
// package limit, where Bucket is a token bucket, Keyed one per key, and
// Rate a fixed window, which this package does not have.
// [WithBatch] takes tokens n at a time, for a hot limit: about one round
// trip per n requests, at a cost in accuracy stated there.
//
// # Concurrency limits
//
// [Concurrency] keeps one sorted set per limit, "{prefix:lease:name}":
// each request in flight anywhere in the fleet holds a lease in it, whose
// score is its expiry on Redis's clock. A replica renews its leases every
// third of the TTL from one goroutine that runs only while it holds some,
// and gives each back when its call ends; the leases of a replica that
// crashed expire within the TTL. Waiters poll ([WithPollInterval], with
// jitter), so they are not served first come, first served across the
// fleet, and each costs about one round trip per poll interval. A lease a
// paused replica finds gone is reported as [ErrLeaseLost] and its call
// goes on, so the fleet may briefly run one over the limit.
//
// # Keys and Redis Cluster
//
// Every key a limit writes begins with the prefix ([WithPrefix], "tower"
// by default) and carries a hash tag, so that the limits work on Redis
// Cluster as they do on one server: a Bucket's state is
// "{prefix:rate:name}", one slot for the limit; a Keyed's bucket for
// key k is "prefix:rate:name:{k}", so that the buckets of many keys spread
// over the cluster's nodes by key. Each script touches one key, or keys of
// one tag.
//
// # Observing
//
// [WithObserver] sees every round trip, its latency and its error: count
// its calls to count round trips (a benchmark's round trips per request, a
// dashboard's Redis errors). [WithMetrics] reports callers waiting in
// Ready, a concurrency limit's requests in flight, and a per-key limit's
// refusals.
//
// # Tests
//
// The tests run a real redis-server (package [github.com/towergo/tower/towerredis/redistest], which your own
// tests can use too), on a free
// loopback port, on the real clock with every wait bounded, except where
// they check the script's arithmetic to the microsecond or run the
// conformance suite on testing/synctest's clock: then the script takes the
// test's clock instead of Redis's, through an unexported path.
package towerredis
