package discover_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/towergo/tower/discover"
)

// flipResolver answers 100 addresses, ten of which change at every lookup.
type flipResolver struct {
	sets [2][]netip.Addr
	n    int
}

func newFlip() *flipResolver {
	f := &flipResolver{}
	for i := range 100 {
		a := netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})
		f.sets[0] = append(f.sets[0], a)
		if i < 10 {
			a = netip.AddrFrom4([4]byte{10, 0, 1, byte(i)})
		}
		f.sets[1] = append(f.sets[1], a)
	}
	return f
}

func (f *flipResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	f.n++
	return f.sets[f.n%2], nil
}

func (f *flipResolver) LookupSRV(context.Context, string, string, string) (string, []*net.SRV, error) {
	return "", nil, nil
}

var sink int

// BenchmarkDNSNext is one change from a DNS Discover of 100 addresses of
// which 10 change at every lookup: each lookup gives 20 changes, so an
// operation is a twentieth of a lookup and its diff.
func BenchmarkDNSNext(b *testing.B) {
	d := discover.NewDNS(newFlip(), "b", 80, time.Nanosecond, func(addr string) (string, error) { return addr, nil })
	ctx := b.Context()
	for range 100 { // the first lookup inserts all 100
		d.Next(ctx)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ch, err := d.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n += len(ch.Key)
	}
	sink += n
}
