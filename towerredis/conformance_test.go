package towerredis

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/redistest"
	"github.com/towergo/tower/towertest"
)

// closing is a limit that closes its client when the conformance suite
// closes it, so that no goroutine of the client outlives the test's
// bubble.
type closing struct {
	tower.Service[string, string]
	c *redis.Client
}

func (c closing) Close() error { return c.c.Close() }

// The conformance suite, against a real redis-server. The suite runs each
// test in a testing/synctest bubble, on a fake clock, and Redis's clock
// does not follow it; so here the script takes its now from the bubble's
// clock (the path the arithmetic tests use), and everything else is real:
// the server, the client, the script, the round trips.
func TestBucketConformance(t *testing.T) {
	srv := redistest.Start(t)
	var n atomic.Int64
	for _, tt := range []struct {
		name string
		wrap func(tower.Service[string, string], *redis.Client, string) tower.Service[string, string]
	}{
		{"Bucket1Per100ms", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			r := NewBucket(inner, c, name, 1, 100*time.Millisecond, 1)
			r.b.clock = bubbleNow
			return r
		}},
		{"Bucket3PerSecondBurst3", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			r := NewBucket(inner, c, name, 3, time.Second, 3)
			r.b.clock = bubbleNow
			return r
		}},
		{"BucketBatch4", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			r := NewBucket(inner, c, name, 10, time.Second, 4, WithBatch(4))
			r.b.clock = bubbleNow
			return r
		}},
		{"Keyed", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			// Waits for its key's token, as the suite's callers expect.
			r := NewKeyed(inner, c, name, func(s string) string { return s }, 1, time.Second, 1, WithMaxWait(time.Minute))
			r.b.clock = bubbleNow
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] {
					return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
						c := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, Protocol: 2})
						name := "conformance" + strconv.FormatInt(n.Add(1), 10)
						return closing{tt.wrap(inner, c, name), c}
					})
				},
				Request: "hello", Response: "world",
			}.Run(t)
		})
	}
}
