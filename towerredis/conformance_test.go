package towerredis_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis"
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

// The conformance suite, against a real redis-server: the server, the
// client, the script and the round trips are real. The suite runs each
// test in a testing/synctest bubble, on a fake clock, while the script
// reads Redis's real clock, which the bubble's does not move. So the
// limits are chosen such that nothing in the suite waits for Redis's
// clock: every token a caller waits for (up to the suite's 8 at once) is
// reserved in one round trip and slept for on the bubble's clock, and a
// token comes back only every 7.5s or more of real time, far longer than
// the suite's tests take, so no capacity the suite measures twice changes
// in between.
func TestBucketConformance(t *testing.T) {
	srv := redistest.Start(t)
	var n atomic.Int64
	for _, tt := range []struct {
		name string
		wrap func(tower.Service[string, string], *redis.Client, string) tower.Service[string, string]
	}{
		{"Bucket8PerMinuteBurst4", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			// 4 tokens now, and 4 more reserved within the span of 30s.
			return towerredis.NewBucket(inner, c, name, 8, time.Minute, 4)
		}},
		{"Bucket8PerMinuteBurst8", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			return towerredis.NewBucket(inner, c, name, 8, time.Minute, 8)
		}},
		{"BucketBatch4", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			// A batch of 4 now, and one of 4 reserved within the span.
			return towerredis.NewBucket(inner, c, name, 8, time.Minute, 4, towerredis.WithBatch(4))
		}},
		{"Keyed", func(inner tower.Service[string, string], c *redis.Client, name string) tower.Service[string, string] {
			// Waits for its key's token, as the suite's callers expect.
			return towerredis.NewKeyed(inner, c, name, func(s string) string { return s }, 1, time.Minute, 1, towerredis.WithMaxWait(time.Hour))
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
