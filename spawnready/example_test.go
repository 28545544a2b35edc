package spawnready_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/spawnready"
)

// conn is a connection that must finish a handshake before it can take
// requests. The handshake goes on only while some Ready waits for it: a
// Ready whose ctx is done gives up at once.
type conn struct {
	peer chan struct{} // closed when the server answers the handshake

	mu    sync.Mutex
	ready bool
}

func (c *conn) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	c.mu.Lock()
	ready := c.ready
	c.mu.Unlock()
	if !ready {
		select {
		case <-c.peer:
		case <-ctx.Done():
			return tower.Permit[string, string]{}, ctx.Err()
		}
		c.mu.Lock()
		c.ready = true
		c.mu.Unlock()
	}
	return tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return strings.ToUpper(req), nil
	}).Ready(ctx)
}

// LoadShed asks "ready now?" and never waits. Over the connection alone,
// each question would give up the handshake at once, and every request
// would be shed. SpawnReady goes on with the handshake in the background
// after the first question, so once the server answers, requests go
// through.
func Example() {
	c := &conn{peer: make(chan struct{})}
	sr := spawnready.New[string, string](c)
	defer sr.Close()
	svc := loadshed.New[string, string](sr)

	_, err := tower.Call[string, string](context.Background(), svc, "hello")
	fmt.Println(err)

	close(c.peer) // the server answers the handshake
	// Waiting in Ready takes the permit the background got.
	p, err := sr.Ready(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Release()

	rsp, err := tower.Call[string, string](context.Background(), svc, "hello")
	fmt.Println(rsp, err)
	// Output:
	// service overloaded
	// HELLO <nil>
}
