package discover

import (
	"net"
	"testing"
	"time"
)

// A nil Resolver means net.DefaultResolver.
func TestNilResolverIsDefault(t *testing.T) {
	mk := func(string) (int, error) { return 0, nil }
	if d := NewDNS(nil, "example.com", 80, time.Second, mk); d.resolver != net.DefaultResolver {
		t.Errorf("NewDNS: got resolver %v, want net.DefaultResolver", d.resolver)
	}
	if d := NewDNSSRV(nil, "http", "tcp", "example.com", time.Second, mk); d.resolver != net.DefaultResolver {
		t.Errorf("NewDNSSRV: got resolver %v, want net.DefaultResolver", d.resolver)
	}
}
