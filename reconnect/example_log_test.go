package reconnect_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
)

// A Reconnect given a logger logs each connect that fails, with the
// target and how many have failed in a row; the callers hear of it from
// their permits' Call. The handler drops the time, so that the output is
// the same at every run.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	refusals := 2
	dial := reconnect.MakeFunc[string, string, string](func(_ context.Context, addr string) (tower.Service[string, string], error) {
		if refusals > 0 {
			refusals--
			return nil, errors.New("connection refused")
		}
		return tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			return addr + " says " + req, nil
		}), nil
	})
	conn := reconnect.New[string, string, string](dial, "db-1:5432", reconnect.WithLogger(logger))
	defer conn.Close()
	for range 3 {
		res, err := tower.Call(context.Background(), conn, "hello")
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(res)
	}
	// Output:
	// level=WARN msg="reconnect: connect failed; the next Ready connects again" target=db-1:5432 attempt=1 err="connection refused"
	// error: reconnect: connect failed: connection refused
	// level=WARN msg="reconnect: connect failed; the next Ready connects again" target=db-1:5432 attempt=2 err="connection refused"
	// error: reconnect: connect failed: connection refused
	// db-1:5432 says hello
}
