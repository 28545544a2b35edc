package towergrpc

import (
	"context"

	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// WithPriority makes a server interceptor put the priority f returns for
// each RPC in its context ([tower.WithPriority]) before the stack sees it,
// for a limit that admits and sheds by priority (package adaptive's) and
// for the handler. f gets the RPC's context and its full method name, on
// the RPC's goroutine. A priority a client can set is one a client can
// claim: read it from metadata ([PriorityMetadata]) only from a party you
// trust. The default is every RPC normal. It panics if f is nil.
func WithPriority(f func(ctx context.Context, fullMethod string) tower.Priority) ServerOption {
	if guard.IsNil(f) {
		panic("towergrpc.WithPriority: nil function")
	}
	return func(c *config) { c.priority = f }
}

// PriorityMetadata returns a function for [WithPriority] that reads an
// RPC's priority from its incoming metadata key with [tower.ParsePriority]:
// without the key, or with an unknown value, it is normal. A client sends
// it with metadata.AppendToOutgoingContext(ctx, key, "low"). It panics if
// key is empty.
func PriorityMetadata(key string) func(ctx context.Context, fullMethod string) tower.Priority {
	if key == "" {
		panic("towergrpc.PriorityMetadata: empty key")
	}
	return func(ctx context.Context, _ string) tower.Priority {
		v := metadata.ValueFromIncomingContext(ctx, key)
		if len(v) == 0 {
			return tower.PriorityNormal
		}
		p, _ := tower.ParsePriority(v[0])
		return p
	}
}

// prioritize returns ctx with the priority c gives the RPC of method, or
// ctx itself for normal.
func (c *config) prioritize(ctx context.Context, method string) context.Context {
	if c.priority == nil {
		return ctx
	}
	if p := c.priority(ctx, method); p != tower.PriorityNormal {
		return tower.WithPriority(ctx, p)
	}
	return ctx
}
