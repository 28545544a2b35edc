package towerredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// The options' bad input panics, naming the option and what is wrong.
func TestOptionsBadInput(t *testing.T) {
	towertest.Panics(t, "towerredis.WithTimeout: timeout must be positive, got 0s", func() { WithTimeout(0) })
	towertest.Panics(t, "towerredis.WithTimeout: timeout must be positive, got -1ms", func() { WithTimeout(-time.Millisecond) })
	towertest.Panics(t, "towerredis.WithRetryInterval: interval must be positive, got 0s", func() { WithRetryInterval(0) })
	towertest.Panics(t, "towerredis.WithRetryInterval: interval must be positive, got -1s", func() { WithRetryInterval(-time.Second) })
	towertest.Panics(t, "towerredis.WithFailMode: unknown mode FailMode(0)", func() { WithFailMode(0) })
	towertest.Panics(t, "towerredis.WithFailMode: unknown mode FailMode(3)", func() { WithFailMode(3) })
	towertest.Panics(t, "towerredis.WithPrefix: prefix is empty", func() { WithPrefix("") })
	towertest.Panics(t, "towerredis.WithObserver: observe is nil", func() { WithObserver(nil) })
	// The smallest values are taken.
	o := newOptions("test", []Option{WithTimeout(1), WithRetryInterval(1), WithFailMode(FailClosed), WithPrefix("p")})
	if o.timeout != 1 || o.retry != 1 || o.fail != FailClosed || o.prefix != "p" {
		t.Errorf("options %+v, want timeout 1ns, retry 1ns, FailClosed, prefix p", o)
	}
}

// The defaults, with nothing given: a round trip of 50ms at most, a retry
// after 100ms, failing open, keys under "tower".
func TestOptionsDefaults(t *testing.T) {
	o := newOptions("test", nil)
	if o.timeout != 50*time.Millisecond || o.retry != 100*time.Millisecond || o.fail != FailOpen || o.prefix != "tower" || o.poll != 0 {
		t.Errorf("defaults %+v, want timeout 50ms, retry 100ms, FailOpen, prefix tower, poll unset", o)
	}
	if FailOpen.String() != "FailOpen" || FailClosed.String() != "FailClosed" || FailMode(7).String() != "FailMode(7)" {
		t.Errorf("FailMode strings: %v %v %v", FailOpen, FailClosed, FailMode(7))
	}
}

// WithPrefix begins every key a limit writes: a Bucket's, a Keyed's and
// a Concurrency's, each with its hash tag.
func TestWithPrefixKeys(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	svc := tower.ServiceFunc[string, string](func(_ context.Context, s string) (string, error) { return s, nil })
	if got := NewBucket(svc, rdb, "api", 1, time.Second, 1, WithPrefix("app")).Key(); got != "{app:rate:api}" {
		t.Errorf("Bucket key %q, want {app:rate:api}", got)
	}
	key := func(s string) string { return s }
	if got := NewKeyed(svc, rdb, "api", key, 1, time.Second, 1, WithPrefix("app")).Key("alice"); got != "app:rate:api:{alice}" {
		t.Errorf("Keyed key %q, want app:rate:api:{alice}", got)
	}
	c := NewConcurrency(svc, rdb, "api", 1, time.Second, WithPrefix("app"))
	if got := c.keys[0]; got != "{app:lease:api}" {
		t.Errorf("Concurrency key %q, want {app:lease:api}", got)
	}
	if c.o.poll != 10*time.Millisecond {
		t.Errorf("Concurrency's poll interval %v, want the default 10ms", c.o.poll)
	}
}

// A LimitedError says why: the key's next token, or, failing closed, the
// round trip's error, which it wraps.
func TestLimitedErrorMessage(t *testing.T) {
	e := &LimitedError{Name: "api", Key: "alice", Wait: 1500 * time.Millisecond}
	if got, want := e.Error(), `towerredis: rate limit exceeded: limit "api", key "alice": next token in 1.5s`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = &LimitedError{Name: "api", Key: "alice", Err: context.DeadlineExceeded}
	if got, want := e.Error(), `towerredis: rate limit exceeded: limit "api", key "alice": Redis unreachable, failing closed: context deadline exceeded`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(e, context.DeadlineExceeded) || !errors.Is(e, ErrLimited) {
		t.Error("a LimitedError of a round trip that failed does not wrap its error and ErrLimited")
	}
}
