package buffer_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// A Buffer given a logger logs the failure of its inner service once,
// however many requests fail because of it. The handler here drops the
// time, so that the output is the same at every run.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	inner, h := towertest.NewMock[string, string]()
	b := buffer.New[string, string](inner, 8, buffer.WithLogger(logger))
	defer b.Close()

	h.FailReady(errors.New("connection refused")) // broken for good
	for _, req := range []string{"a", "b", "c"} {
		_, err := tower.Call[string, string](context.Background(), b, req)
		fmt.Println(req+":", err)
	}
	// Output:
	// level=ERROR msg="buffer: the inner service failed; the Buffer fails every request from now on" err="connection refused"
	// a: buffered service failed: connection refused
	// b: buffered service failed: connection refused
	// c: buffered service failed: connection refused
}
