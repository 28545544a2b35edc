package discover

import (
	"context"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Resolver looks names up in the DNS. *net.Resolver satisfies it.
type Resolver interface {
	// LookupNetIP returns the addresses of host (A and AAAA records for
	// network "ip").
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	// LookupSRV returns the SRV records of _service._proto.name, or of
	// name when service and proto are empty.
	LookupSRV(ctx context.Context, service, proto, name string) (cname string, addrs []*net.SRV, err error)
}

// DNS is a Discover of the addresses a DNS name resolves to, looked up
// again on an interval. Each address ("10.0.0.1:8080", "[2001:db8::1]:8080",
// or for SRV records "host.example.com:8080") is a key; the user's function
// makes the endpoint for it, and the consumer, not DNS, closes it. SRV
// priorities and weights are not used.
//
// A DNS is not safe for concurrent use. The zero DNS is not usable; make
// one with [NewDNS] or [NewDNSSRV]. S is the endpoint type.
type DNS[S any] struct {
	resolver   Resolver
	name       string
	lookup     func(ctx context.Context) ([]string, error)
	interval   time.Duration
	newService func(addr string) (S, error)
	dnsOptions

	current  map[string]bool // addresses inserted and not removed since
	queue    []dnsItem[S]    // changes and reports not returned yet
	due      time.Time       // when the next lookup starts; zero: at once
	excluded int             // addresses the last good lookup left out
}

type dnsItem[S any] struct {
	change Change[string, S]
	err    error
}

// NewDNS returns a Discover of the addresses host resolves to (A and AAAA
// records), each with port, looked up every interval. newService makes the
// endpoint for an address. A nil r (or one holding a nil pointer) means
// net.DefaultResolver. An interval too long for the clock to reach means
// no lookup after the first. It panics if host is empty, port is not
// between 1 and 65535, interval is not positive, newService is nil, or an
// option is nil.
func NewDNS[S any](r Resolver, host string, port int, interval time.Duration, newService func(addr string) (S, error), opts ...DNSOption) *DNS[S] {
	const fn = "discover.NewDNS"
	option.PanicIf(host == "", "%s: host is empty", fn)
	option.PanicIf(port < 1 || port > 65535, "%s: port must be between 1 and 65535, got %d", fn, port)
	d := newDNS(fn, r, host, interval, newService, opts)
	d.lookup = func(ctx context.Context) ([]string, error) {
		ips, err := d.resolver.LookupNetIP(ctx, "ip", host)
		addrs := make([]string, len(ips))
		for i, ip := range ips {
			addrs[i] = netip.AddrPortFrom(ip.Unmap(), uint16(port)).String()
		}
		return addrs, err
	}
	return d
}

// NewDNSSRV returns a Discover of the targets of the SRV records of
// _service._proto.name (or of name, if service and proto are empty), looked
// up every interval. newService makes the endpoint for a "target:port" key,
// the target without its final dot, and resolves the target itself when it
// connects. A nil r means net.DefaultResolver. It panics if name is empty,
// interval is not positive, newService is nil, or an option is nil.
func NewDNSSRV[S any](r Resolver, service, proto, name string, interval time.Duration, newService func(addr string) (S, error), opts ...DNSOption) *DNS[S] {
	const fn = "discover.NewDNSSRV"
	option.PanicIf(name == "", "%s: name is empty", fn)
	full := name
	if service != "" || proto != "" {
		full = "_" + service + "._" + proto + "." + name
	}
	d := newDNS(fn, r, full, interval, newService, opts)
	d.lookup = func(ctx context.Context) ([]string, error) {
		_, srvs, err := d.resolver.LookupSRV(ctx, service, proto, name)
		addrs := make([]string, len(srvs))
		for i, s := range srvs {
			addrs[i] = net.JoinHostPort(strings.TrimSuffix(s.Target, "."), strconv.Itoa(int(s.Port)))
		}
		return addrs, err
	}
	return d
}

// newDNS returns a DNS without its lookup.
func newDNS[S any](fn string, r Resolver, name string, interval time.Duration, newService func(string) (S, error), opts []DNSOption) *DNS[S] {
	option.PanicIf(interval <= 0, "%s: interval must be positive, got %v", fn, interval)
	option.PanicIf(newService == nil, "%s: newService is nil", fn)
	if isnil.Is(r) {
		r = net.DefaultResolver
	}
	d := &DNS[S]{
		resolver:   r,
		name:       name,
		interval:   interval,
		newService: newService,
		dnsOptions: dnsOptions{max: DefaultMaxEndpoints},
		current:    make(map[string]bool),
	}
	option.Onto(fn, &d.dnsOptions, opts)
	return d
}

// Next returns the next change. The first Next looks the name up at once;
// then a lookup starts every interval, counted from the start of the
// previous one, once the last lookup's changes have all been returned:
// new addresses inserted first, then vanished ones removed, each in sorted
// order, so a set replaced whole never goes through empty.
//
// A failed lookup is reported as a *[LookupError], a failure to make an
// address's service as a *[ServiceError]; a panic in the Resolver or that
// function the same way, with a *tower.PanicError as Err.
func (d *DNS[S]) Next(ctx context.Context) (Change[string, S], error) {
	for len(d.queue) == 0 {
		if err := ctx.Err(); err != nil {
			return Change[string, S]{}, err
		}
		select {
		case <-time.After(time.Until(d.due)):
		case <-ctx.Done():
			return Change[string, S]{}, ctx.Err()
		}
		if err := d.refresh(ctx); err != nil {
			return Change[string, S]{}, d.logged(err)
		}
	}
	it := d.queue[0]
	d.queue[0] = dnsItem[S]{}
	d.queue = d.queue[1:]
	return it.change, d.logged(it.err)
}

// Where a DNS runs user code in Next.
const (
	whereResolver   = "the Resolver, in a DNS Discover's Next"
	whereNewService = "the function that makes a service, in a DNS Discover's Next"
)

// refresh looks the name up and queues the changes to the set found.
func (d *DNS[S]) refresh(ctx context.Context) error {
	start := time.Now()
	var addrs []string
	var err error
	if perr := guard.Call(whereResolver, func() { addrs, err = d.lookup(ctx) }); perr != nil {
		err = perr
	} else if err != nil && ctx.Err() != nil {
		return ctx.Err() // cut short: the lookup is still due
	}
	// Beyond the monotonic clock's reach, Add falls back on the wall
	// clock: an interval that long never ends.
	d.due = start.Add(d.interval)
	if err == nil && len(addrs) == 0 {
		err = ErrNoAddresses
	}
	if err != nil {
		return &LookupError{Name: d.name, Err: err}
	}
	slices.Sort(addrs)
	addrs = d.capped(slices.Compact(addrs))
	found := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		found[a] = true
		if !d.current[a] {
			d.insert(a)
		}
	}
	for _, a := range slices.Sorted(maps.Keys(d.current)) {
		if !found[a] {
			delete(d.current, a)
			d.queue = append(d.queue, dnsItem[S]{change: Change[string, S]{Kind: Remove, Key: a}})
		}
	}
	return nil
}

// insert queues the insert of a new address, or the report of its failure.
func (d *DNS[S]) insert(a string) {
	var s S
	var err error
	if perr := guard.Call(whereNewService, func() { s, err = d.newService(a) }); perr != nil {
		err = perr
	}
	if err != nil {
		d.queue = append(d.queue, dnsItem[S]{err: &ServiceError{Addr: a, Err: err}})
		return
	}
	d.current[a] = true
	d.queue = append(d.queue, dnsItem[S]{change: Change[string, S]{Kind: Insert, Key: a, Service: s}})
}
