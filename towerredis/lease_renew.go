package towerredis

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// renew is the renewal goroutine: it renews the replica's leases every
// third of the TTL, and ends as soon as the replica holds none. A failed
// renewal is not retried: MinTTLTimeouts leaves room for one to fail.
func (c *Concurrency[Req, Res]) renew() {
	t := time.NewTimer(c.ttl / 3)
	ended := false
	defer func() {
		t.Stop()
		if !ended { // the observer called runtime.Goexit
			c.mu.Lock()
			c.renewing = false
			c.mu.Unlock()
		}
	}()
	for {
		select {
		case <-t.C:
			members := c.heldMembers()
			if members == nil {
				ended = true
				return
			}
			renew := func() { c.renewOnce(members) }
			if perr := guard.Call("the observer given with towerredis.WithObserver", renew); perr != nil {
				guard.Orphan(perr)
			}
			t.Reset(c.ttl / 3)
		case <-c.idle:
			c.mu.Lock()
			done := len(c.held) == 0
			if done {
				c.renewing = false
			}
			c.mu.Unlock()
			if done {
				ended = true
				return
			}
		}
	}
}

// heldMembers returns the leases to renew; or nil, marking the renewal
// goroutine stopped, if there are none.
func (c *Concurrency[Req, Res]) heldMembers() []leaseID {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held) == 0 {
		c.renewing = false
		return nil
	}
	members := make([]leaseID, 0, len(c.held))
	for id, m := range c.held {
		members = append(members, leaseID{id, m})
	}
	return members
}

// A leaseID is a lease's id and its member in the sorted set.
type leaseID struct {
	id     uint64
	member string
}

// renewOnce renews leases in one round trip. Those Redis no longer has
// and the replica still holds are lost: they stop being renewed, and the
// observer gets an ErrLeaseLost.
func (c *Concurrency[Req, Res]) renewOnce(leases []leaseID) {
	args := make([]any, 1, 1+len(leases))
	args[0] = c.ttlArg
	for _, l := range leases {
		args = append(args, l.member)
	}
	roundTrip(context.Background(), &c.o, "lease.renew", func(ctx context.Context) (any, error) {
		reply, err := renewScript.Run(ctx, c.client, c.keys, args...).Result()
		if err != nil {
			return nil, err
		}
		positions, ok := lostPositions(reply, len(leases))
		if !ok {
			return reply, nil // for the check to refuse
		}
		n := 0
		for _, p := range positions {
			if _, ok := c.unhold(leases[p-1].id); ok {
				n++
			}
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: %d of the %d leases of limit %q this replica renewed", ErrLeaseLost, n, len(leases), c.name)
		}
		return reply, nil
	}, func(reply any) (bool, bool) {
		_, ok := lostPositions(reply, len(leases))
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
