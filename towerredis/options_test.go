package towerredis

// In-package: it checks the unexported options that the options build.

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
	towertest.Panics(t, "towerredis.WithFailMode: unknown mode FailMode(0)", func() { WithFailMode(0) })
	towertest.Panics(t, "towerredis.WithFailMode: unknown mode FailMode(3)", func() { WithFailMode(3) })
	towertest.Panics(t, "towerredis.WithPrefix: prefix is empty", func() { WithPrefix("") })
	towertest.Panics(t, "towerredis.WithObserver: observe is nil", func() { WithObserver(nil) })
	towertest.Panics(t, "towerredis.WithMaxWait: d must not be negative, got -1ns", func() { WithMaxWait(-1) })
	towertest.Panics(t, "towerredis.WithBatch: n must be at least 1, got 0", func() { WithBatch(0) })
	towertest.Panics(t, "test: option 2 is nil", func() { keyedOptions("test", []KeyedOption{WithMaxWait(0), WithTimeout(1), Option(nil)}) })
	// The smallest values are taken, and options apply in order.
	o := bucketOptions("test", []BucketOption{WithTimeout(1), WithFailMode(FailClosed), WithPrefix("p"), WithBatch(1)})
	if o.timeout != 1 || o.fail != FailClosed || o.prefix != "p" || o.batch != 1 {
		t.Errorf("options %+v, want timeout 1ns, FailClosed, prefix p, batch 1", o)
	}
	// WithMaxWait(0) is allowed: no wait, the default, as limit.WithMaxWait(0).
	if o := keyedOptions("test", []KeyedOption{WithMaxWait(time.Second), WithMaxWait(0)}); o.maxWait != 0 {
		t.Errorf("WithMaxWait(1s) then WithMaxWait(0): max wait %v, want 0", o.maxWait)
	}
}

// The defaults, with nothing given: a round trip of 50ms at most, failing
// open, keys under "tower", no batch and no wait; a Concurrency polls every
// 10ms.
func TestOptionsDefaults(t *testing.T) {
	o := bucketOptions("test", nil)
	if o.timeout != 50*time.Millisecond || o.fail != FailOpen || o.prefix != "tower" || o.batch != 0 || o.maxWait != 0 || o.poll != 0 {
		t.Errorf("defaults %+v, want timeout 50ms, FailOpen, prefix tower, no batch, no wait, poll unset", o)
	}
	if o := concurrencyOptions("test", nil); o.poll != 10*time.Millisecond {
		t.Errorf("a Concurrency's poll interval %v, want 10ms", o.poll)
	}
	if FailOpen.String() != "FailOpen" || FailClosed.String() != "FailClosed" || FailMode(7).String() != "FailMode(7)" {
		t.Errorf("FailMode strings: %v %v %v", FailOpen, FailClosed, FailMode(7))
	}
}

// An option that applies to one kind of limit has that kind's option type
// only, so that giving it to another kind does not compile; an Option
// applies to every kind.
func TestOptionKinds(t *testing.T) {
	for _, tt := range []struct {
		name                       string
		opt                        any
		bucket, keyed, concurrency bool
	}{
		{"WithTimeout", WithTimeout(time.Second), true, true, true},
		{"WithFailMode", WithFailMode(FailClosed), true, true, true},
		{"WithPrefix", WithPrefix("p"), true, true, true},
		{"WithMetrics", WithMetrics(nil), true, true, true},
		{"WithObserver", WithObserver(func(RoundTrip) {}), true, true, true},
		{"WithBatch", WithBatch(2), true, false, false},
		{"WithMaxWait", WithMaxWait(time.Second), false, true, false},
		{"WithPollInterval", WithPollInterval(time.Second), false, false, true},
	} {
		_, bucket := tt.opt.(BucketOption)
		_, keyed := tt.opt.(KeyedOption)
		_, concurrency := tt.opt.(ConcurrencyOption)
		if bucket != tt.bucket || keyed != tt.keyed || concurrency != tt.concurrency {
			t.Errorf("%s: applies to a Bucket %t, a Keyed %t, a Concurrency %t; want %t, %t, %t",
				tt.name, bucket, keyed, concurrency, tt.bucket, tt.keyed, tt.concurrency)
		}
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

// An UnreachableError names the limit and says why, and wraps
// ErrUnreachable and the round trip's error.
func TestUnreachableErrorMessage(t *testing.T) {
	e := &UnreachableError{Name: "api", Err: context.DeadlineExceeded}
	if got, want := e.Error(), `towerredis: limit "api": Redis unreachable, failing closed: context deadline exceeded`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(e, context.DeadlineExceeded) || !errors.Is(e, ErrUnreachable) {
		t.Error("an UnreachableError does not wrap its round trip's error and ErrUnreachable")
	}
	if !tower.IsOverloaded(e) || tower.IsThrottled(e) || tower.IsTimeout(e) {
		t.Errorf("IsOverloaded %t, IsThrottled %t, IsTimeout %t; want true, false, false",
			tower.IsOverloaded(e), tower.IsThrottled(e), tower.IsTimeout(e))
	}
}
