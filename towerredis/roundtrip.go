package towerredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/towerredis/internal/mono"
)

// checkClient panics, naming fn, if client is nil, or is a go-redis client
// that ignores context deadlines, or if the limit's name is empty.
func checkClient(fn string, client redis.Scripter, name string) {
	if guard.IsNil(client) {
		panic(fn + ": client is nil")
	}
	enabled := true
	switch c := client.(type) {
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		enabled = c.Options().ContextTimeoutEnabled
	}
	if !enabled {
		panic(fn + ": the client's ContextTimeoutEnabled is false, so go-redis would ignore the deadline of each round trip and a Redis that hangs would hang Ready; set it to true in the client's options")
	}
	if name == "" {
		panic(fn + ": name is empty")
	}
}

// roundTrip runs one script call for op, bounded by the limit's timeout,
// and tells the observer how it went. It keeps ctx's values but not its
// cancellation: a done ctx (a LoadShed's probe) still gets its round trip,
// and a caller that gives up cannot lose what Redis granted. A reply that
// check refuses is an ErrBadReply. If the observer panics after a reply
// check accepted, undo, if not nil, gives back what it granted.
func roundTrip[T any](ctx context.Context, o *options, op string, run func(context.Context) (any, error), check func(any) (T, bool), undo func(T)) (T, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.timeout)
	start := mono.Now()
	reply, err := run(ctx)
	cancel()
	var v T
	if err == nil {
		var ok bool
		if v, ok = check(reply); !ok {
			err = fmt.Errorf("%w: %s answered %T %v", ErrBadReply, op, reply, reply)
		}
	}
	if o.observer != nil {
		rt := RoundTrip{Op: op, Latency: mono.Now() - start, Err: err}
		if undo == nil || err != nil {
			o.observer(rt)
		} else {
			guard.Undo(func() { o.observer(rt) }, func() { undo(v) })
		}
	}
	return v, err
}

// ints reads a reply that must be a list of len(A) integers.
func ints[A [2]int64 | [3]int64](reply any) (v A, ok bool) {
	list, ok := reply.([]any)
	if !ok || len(list) != len(v) {
		return v, false
	}
	for i, x := range list {
		if v[i], ok = x.(int64); !ok {
			return v, false
		}
	}
	return v, true
}

// sleep waits d, or until ctx ends, and reports whether it waited all of d.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
