package spawnready_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
)

// handshakeFailed is a service whose Ready fails: it is broken for good.
type handshakeFailed struct{}

func (handshakeFailed) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.Permit[string, string]{}, errors.New("handshake failed")
}

// A SpawnReady given a logger logs, once, the failure of its inner
// service's Ready, after which every Ready fails with it. The handler
// drops the time, so that the output is the same at every run.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	sr := spawnready.New[string, string](handshakeFailed{}, spawnready.WithLogger(logger))
	defer sr.Close()
	for range 2 {
		_, err := sr.Ready(context.Background())
		fmt.Println("Ready:", err)
	}
	// Output:
	// level=ERROR msg="spawnready: the inner service's Ready failed; every Ready fails from now on" err="handshake failed"
	// Ready: handshake failed
	// Ready: handshake failed
}
