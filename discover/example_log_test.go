package discover_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/towergo/tower/discover"
)

// A DNS Discover given a logger logs each report it returns: here a failed
// lookup, which leaves the set as it was. The handler drops the time, so
// that the output is the same at every run.
func ExampleWithLogger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	resolver := newFake(fakeAnswer{err: errors.New("server misbehaving")}) // a fake *net.Resolver
	d := discover.NewDNS(resolver, "backend.internal", 8080, 10*time.Second,
		func(addr string) (string, error) { return addr, nil },
		discover.WithLogger(logger))
	_, err := d.Next(context.Background())
	fmt.Println("Next:", err)
	// Output:
	// level=WARN msg="discover: DNS lookup failed; the endpoints stay as they are" name=backend.internal err="server misbehaving"
	// Next: discover: lookup backend.internal: server misbehaving
}
