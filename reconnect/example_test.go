package reconnect_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/timeout"
)

// The first connect fails: the caller learns it from Call, with a
// *ConnectError, and the Reconnect stays usable; the next Ready connects
// again. The maker is an ordinary service, so a timeout bounds each
// connect.
func Example() {
	dials := 0
	dial := reconnect.MakeFunc[string, string, string](func(_ context.Context, addr string) (tower.Service[string, string], error) {
		dials++
		if dials == 1 {
			return nil, errors.New("connection refused")
		}
		conn := dials
		return tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			return fmt.Sprintf("%s from %s, connection %d", req, addr, conn), nil
		}), nil
	})
	svc := reconnect.New(timeout.New(dial, 2*time.Second), "db-1")
	defer svc.Close()

	for _, req := range []string{"a", "b", "c"} {
		rsp, err := tower.Call[string, string](context.Background(), svc, req)
		var ce *reconnect.ConnectError
		fmt.Printf("%q %v connect error: %v\n", rsp, err, errors.As(err, &ce))
	}
	// Output:
	// "" reconnect: connect failed: connection refused connect error: true
	// "b from db-1, connection 2" <nil> connect error: false
	// "c from db-1, connection 2" <nil> connect error: false
}

// conn is a connection that breaks after two requests: its Ready fails
// from then on, which means it is broken for good.
type conn struct {
	id, used int
}

func (c *conn) Ready(context.Context) (tower.Permit[string, string], error) {
	if c.used == 2 {
		return tower.Permit[string, string]{}, errors.New("connection reset")
	}
	return tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		c.used++
		return fmt.Sprintf("%s on connection %d", req, c.id), nil
	}).Ready(context.Background())
}

// A connection that breaks is dropped and replaced within the next Ready;
// the caller does not see the failure.
func Example_brokenConnection() {
	dials := 0
	dial := reconnect.MakeFunc[string, string, string](func(context.Context, string) (tower.Service[string, string], error) {
		dials++
		return &conn{id: dials}, nil
	})
	svc := reconnect.New(dial, "db-1")
	defer svc.Close()

	for _, req := range []string{"a", "b", "c", "d", "e"} {
		rsp, err := tower.Call[string, string](context.Background(), svc, req)
		fmt.Println(rsp, err)
	}
	// Output:
	// a on connection 1 <nil>
	// b on connection 1 <nil>
	// c on connection 2 <nil>
	// d on connection 2 <nil>
	// e on connection 3 <nil>
}
