package towerredis

import (
	"context"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// renew runs on the renewal timer's goroutine, which fires every third of
// the TTL while the replica holds leases. A failed renewal is not retried:
// MinTTLTimeouts leaves room for one to fail.
func (c *Concurrency[Req, Res]) renew() {
	ids, args := c.toRenew()
	if ids == nil {
		return
	}
	returned := false
	defer func() {
		c.mu.Lock()
		if returned && len(c.held) > 0 {
			c.timer.Reset(c.ttl / 3)
		} else { // none left, or the observer called runtime.Goexit
			c.renewing = false
		}
		c.mu.Unlock()
	}()
	guard.Orphan(guard.Call("the observer given with towerredis.WithObserver", func() { c.renewOnce(ids, args) }))
	returned = true
}

// toRenew returns the ids of the leases to renew and the renewal's
// arguments; or nil, marking the renewals stopped, if there are none.
func (c *Concurrency[Req, Res]) toRenew() (ids []uint64, args []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held) == 0 {
		c.renewing = false
		return nil, nil
	}
	ids, args = make([]uint64, 0, len(c.held)), make([]any, 1, 1+len(c.held))
	args[0] = c.ttlArg
	for id, m := range c.held {
		ids, args = append(ids, id), append(args, m)
	}
	return ids, args
}

// renewOnce renews leases in one round trip. Those Redis no longer has
// and the replica still holds are lost: they stop being renewed, and the
// observer gets an ErrLeaseLost.
func (c *Concurrency[Req, Res]) renewOnce(ids []uint64, args []any) {
	roundTrip(context.Background(), &c.o, "lease.renew", func(ctx context.Context) (any, error) {
		reply, err := renewScript.Run(ctx, c.client, c.keys, args...).Result()
		if err != nil {
			return nil, err
		}
		positions, ok := lostPositions(reply, len(ids))
		if !ok {
			return reply, nil // for the check to refuse
		}
		n := 0
		for _, p := range positions {
			if _, ok := c.unhold(ids[p-1]); ok {
				n++
			}
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: %d of the %d leases of limit %q this replica renewed", ErrLeaseLost, n, len(ids), c.name)
		}
		return reply, nil
	}, func(reply any) (bool, bool) {
		_, ok := lostPositions(reply, len(ids))
		return ok, ok
	}, nil)
}

// lostPositions reads renewScript's reply for n leases: the positions,
// from 1, of those that were gone, each at most n.
func lostPositions(reply any, n int) ([]int64, bool) {
	list, ok := reply.([]any)
	if !ok || len(list) > n {
		return nil, false
	}
	out := make([]int64, len(list))
	for i, x := range list {
		if out[i], ok = x.(int64); !ok || out[i] < 1 || out[i] > int64(n) {
			return nil, false
		}
	}
	return out, true
}

// leaseWrapper is the Concurrency's tower.NotedWrapper, kept off its
// method set; a permit's note is its lease's id, 0 if it has none. The
// lease is given back even if the call or inner's Release panics.
type leaseWrapper[Req, Res any] Concurrency[Req, Res]

func (w *leaseWrapper[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], id uint64, req Req) (Res, error) {
	defer (*Concurrency[Req, Res])(w).release(id)
	return inner.Call(ctx, req)
}

func (w *leaseWrapper[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], id uint64) {
	defer (*Concurrency[Req, Res])(w).release(id)
	inner.Release()
}
