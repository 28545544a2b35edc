package balance_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
)

// broken is an endpoint whose Ready fails: it is broken for good.
type broken struct{ err error }

func (b broken) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.Permit[string, string]{}, b.err
}

// A balancer given a logger logs the endpoint it drops, once, with its
// key; the requests, which go to the endpoints left, are not logged. The
// handler here drops the time, so that the output is the same at every
// run.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	ok := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return "ok: " + req, nil
	})
	endpoints := discover.NewList[tower.Service[string, string]](ok, broken{errors.New("connection refused")})
	bal := balance.NewRoundRobin(endpoints, balance.WithLogger(logger))
	defer bal.Close()
	for _, req := range []string{"a", "b"} {
		fmt.Println(tower.Call(context.Background(), bal, req))
	}
	// Output:
	// level=WARN msg="balance: dropped an endpoint whose Ready failed" endpoint=1 err="connection refused"
	// ok: a <nil>
	// ok: b <nil>
}
