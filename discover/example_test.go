package discover_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/towergo/tower/discover"
)

// staticResolver always finds the same two addresses.
type staticResolver struct{}

func (staticResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.1")}, nil
}

func (staticResolver) LookupSRV(context.Context, string, string, string) (string, []*net.SRV, error) {
	return "", nil, nil
}

// The first Next looks the name up; each address is inserted with the
// endpoint made for it. Nothing changes until the next lookup, an interval
// later: a done context asks for a change available now, and there is
// none.
func ExampleNewDNS() {
	d := discover.NewDNS(staticResolver{}, "backend.internal", 8080, 10*time.Second,
		func(addr string) (string, error) { return "client for " + addr, nil })
	ctx := context.Background()
	for range 2 {
		ch, err := d.Next(ctx)
		fmt.Println(ch.Kind, ch.Key, ch.Service, err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err := d.Next(done)
	fmt.Println(err)
	// Output:
	// Insert 10.0.0.1:8080 client for 10.0.0.1:8080 <nil>
	// Insert 10.0.0.2:8080 client for 10.0.0.2:8080 <nil>
	// context canceled
}

// A List inserts its endpoints under their indexes, then ends.
func ExampleList() {
	d := discover.NewList("a", "b")
	for {
		ch, err := d.Next(context.Background())
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(ch.Kind, ch.Key, ch.Service)
	}
	// Output:
	// Insert 0 a
	// Insert 1 b
	// EOF
}

// A Chan turns changes sent on a channel into a Discover.
func ExampleChan() {
	changes := make(chan discover.Change[string, string], 2)
	d := discover.Chan[string, string](changes)
	changes <- discover.Change[string, string]{Kind: discover.Insert, Key: "eu-1", Service: "client eu-1"}
	changes <- discover.Change[string, string]{Kind: discover.Remove, Key: "eu-1"}
	close(changes)
	for {
		ch, err := d.Next(context.Background())
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(ch.Kind, ch.Key)
	}
	// Output:
	// Insert eu-1
	// Remove eu-1
	// EOF
}
