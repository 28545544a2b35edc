package discover_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// panicky is a Resolver that panics at the lookups whose number (from 1)
// is in panics, and otherwise answers as its fake does.
type panicky struct {
	*fakeResolver
	n      int
	panics map[int]bool
}

func (p *panicky) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	p.n++
	if p.panics[p.n] {
		p.fakeResolver.next(ctx, "panic") // counts the lookup
		panic("resolver exploded")
	}
	return p.fakeResolver.LookupNetIP(ctx, network, host)
}

// A panic in the Resolver is a failed lookup: Next reports a LookupError
// of a PanicError, the set is unchanged, and the next lookup is an
// interval later.
func TestDNSResolverPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &panicky{fakeResolver: newFake(ips("10.0.0.1"), ips("10.0.0.1"), ips("10.0.0.2")), panics: map[int]bool{2: true}}
		d := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make)
		start := time.Now()
		s := func(got string, ms int) step { return step{got, time.Duration(ms) * time.Millisecond} }
		checkSteps(t, nextN(t.Context(), d, start, 3), []step{
			s("Insert 10.0.0.1:80 svc(10.0.0.1:80)", 0),
			s("error: discover: lookup b: tower: panic in the Resolver, in a DNS Discover's Next: resolver exploded", 1000),
			s("Insert 10.0.0.2:80 svc(10.0.0.2:80)", 2000),
		})
		r.n = 0
		r.panics = map[int]bool{1: true}
		_, err := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make).Next(t.Context())
		var le *discover.LookupError
		var pe *tower.PanicError
		if !errors.As(err, &le) || !errors.As(err, &pe) || pe.Value != "resolver exploded" || len(pe.Stack) == 0 {
			t.Errorf("got %v, want a *LookupError of a *tower.PanicError with a stack", err)
		}
	})
}

// A panic in the function that makes a service is a failure to make it:
// Next reports a ServiceError of a PanicError, the other addresses go on,
// and the address is tried again at the next lookup.
func TestDNSNewServicePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(ips("10.0.0.1", "10.0.0.2"))
		panics := 1
		mk := func(addr string) (string, error) {
			if addr == "10.0.0.1:80" && panics > 0 {
				panics--
				panic("newService exploded")
			}
			return "svc(" + addr + ")", nil
		}
		d := discover.NewDNS(r, "b", 80, time.Second, mk)
		start := time.Now()
		s := func(got string, ms int) step { return step{got, time.Duration(ms) * time.Millisecond} }
		var first error
		steps := nextN(t.Context(), d, start, 3)
		checkSteps(t, steps, []step{
			s("error: discover: making a service for 10.0.0.1:80: tower: panic in the function that makes a service, in a DNS Discover's Next: newService exploded", 0),
			s("Insert 10.0.0.2:80 svc(10.0.0.2:80)", 0),
			s("Insert 10.0.0.1:80 svc(10.0.0.1:80)", 1000),
		})
		panics = 1
		_, first = discover.NewDNS(r, "b", 80, time.Second, mk).Next(t.Context())
		var se *discover.ServiceError
		var pe *tower.PanicError
		if !errors.As(first, &se) || !errors.As(first, &pe) || pe.Value != "newService exploded" {
			t.Errorf("got %v, want a *ServiceError of a *tower.PanicError", first)
		}
	})
}

// drain returns what Next has queued now, without a lookup: the reports
// and the number of inserts and removes.
func drain(t *testing.T, d *discover.DNS[string]) (reports []string, inserts, removes int) {
	t.Helper()
	ctx := doneCtx(t)
	for {
		ch, err := d.Next(ctx)
		switch {
		case err == context.Canceled:
			return reports, inserts, removes
		case err != nil:
			reports = append(reports, err.Error())
		case ch.Kind == discover.Insert:
			inserts++
		default:
			removes++
		}
	}
}

// manyIPs returns n distinct IPv4 addresses, 10.x.y.z.
func manyIPs(n int) fakeAnswer {
	var a fakeAnswer
	for i := range n {
		a.addrs = append(a.addrs, netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String())
	}
	return a
}

// A resolver answering 20,000 addresses gets
// DefaultMaxEndpoints endpoints made, not 20,000; the lookup is reported
// as a TruncatedError, and the metric reads the 18,976 left out until a
// lookup finds fewer.
func TestDNSDefaultCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The set keeps the first 1024 keys in sorted order; the second
		// lookup finds those and 476 more, the third 100 of them.
		all := manyIPs(20000)
		slices.SortFunc(all.addrs, func(a, b string) int { return strings.Compare(a+":80", b+":80") })
		r := newFake(all, ips(all.addrs[:1500]...), ips(all.addrs[:100]...))
		var c metrics.Counts
		made := 0
		d := discover.NewDNS(r, "b", 80, time.Second, func(addr string) (string, error) {
			made++
			return addr, nil
		}, discover.WithMetrics(&c))
		for i, want := range []struct {
			report                 string
			inserts, removes, made int
			excluded               int64
		}{
			{"discover: lookup b: found 20000 addresses, more than the cap of 1024: 18976 left out", 1024, 0, 1024, 18976},
			{"discover: lookup b: found 1500 addresses, more than the cap of 1024: 476 left out", 0, 0, 1024, 476},
			{"", 0, 924, 1024, 0},
		} {
			_, err := d.Next(t.Context())
			var te *discover.TruncatedError
			switch {
			case want.report != "" && (!errors.As(err, &te) || !errors.Is(err, discover.ErrTooManyAddresses) || err.Error() != want.report):
				t.Errorf("lookup %d: got %v, want a TruncatedError %q", i+1, err, want.report)
			case want.report == "" && err != nil:
				t.Errorf("lookup %d: got %v, want a change", i+1, err)
			case want.report == "":
				want.removes-- // that change was the first remove
			}
			reports, inserts, removes := drain(t, d)
			if len(reports) != 0 || inserts != want.inserts || removes != want.removes || made != want.made {
				t.Errorf("lookup %d: got reports %q, %d inserts, %d removes, %d made; want none, %d, %d, %d", i+1, reports, inserts, removes, made, want.inserts, want.removes, want.made)
			}
			if got := c.Get(metrics.Excluded); got != want.excluded {
				t.Errorf("lookup %d: got Excluded %d, want %d", i+1, got, want.excluded)
			}
		}
	})
}

// At the cap, the set keeps the addresses it has first, so that it does
// not churn, and fills the rest with new ones in sorted order.
func TestDNSCapPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(
			ips("10.0.0.5", "10.0.0.4", "10.0.0.3", "10.0.0.2", "10.0.0.1"),
			ips("10.0.0.6", "10.0.0.5", "10.0.0.4", "10.0.0.3", "10.0.0.2", "10.0.0.0"),
			ips("10.0.0.9", "10.0.0.2"),
		)
		var c metrics.Counts
		d := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make, discover.WithMaxEndpoints(3), discover.WithMetrics(&c))
		start := time.Now()
		s := func(got string, ms int) step { return step{got, time.Duration(ms) * time.Millisecond} }
		checkSteps(t, nextN(t.Context(), d, start, 10), []step{
			s("error: discover: lookup b: found 5 addresses, more than the cap of 3: 2 left out", 0),
			s("Insert 10.0.0.1:80 svc(10.0.0.1:80)", 0),
			s("Insert 10.0.0.2:80 svc(10.0.0.2:80)", 0),
			s("Insert 10.0.0.3:80 svc(10.0.0.3:80)", 0),
			s("error: discover: lookup b: found 6 addresses, more than the cap of 3: 3 left out", 1000),
			s("Insert 10.0.0.0:80 svc(10.0.0.0:80)", 1000),
			s("Remove 10.0.0.1:80", 1000),
			s("Insert 10.0.0.9:80 svc(10.0.0.9:80)", 2000),
			s("Remove 10.0.0.0:80", 2000),
			s("Remove 10.0.0.3:80", 2000),
		})
		if got := c.Get(metrics.Excluded); got != 0 {
			t.Errorf("got Excluded %d, want 0", got)
		}
	})
}

// Every count and duration parameter, at the extremes: refused with a
// clear panic, or sane.
func TestDNSLimits(t *testing.T) {
	mk := (&maker{}).make
	r := newFake(ips("10.0.0.1"))
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"PortMax", func() { discover.NewDNS(r, "h", math.MaxInt64, time.Second, mk) }, "discover.NewDNS: port must be between 1 and 65535, got 9223372036854775807"},
		{"PortMin", func() { discover.NewDNS(r, "h", math.MinInt64, time.Second, mk) }, "discover.NewDNS: port must be between 1 and 65535, got -9223372036854775808"},
		{"IntervalMin", func() { discover.NewDNS(r, "h", 80, math.MinInt64, mk) }, "discover.NewDNS: interval must be positive, got -2562047h47m16.854775808s"},
		{"SRVIntervalMin", func() { discover.NewDNSSRV(r, "", "", "n", math.MinInt64, mk) }, "discover.NewDNSSRV: interval must be positive, got -2562047h47m16.854775808s"},
		{"MaxEndpointsMin", func() { discover.WithMaxEndpoints(math.MinInt64) }, "discover.WithMaxEndpoints: n must be at least 1, got -9223372036854775808"},
		{"MaxEndpointsZero", func() { discover.WithMaxEndpoints(0) }, "discover.WithMaxEndpoints: n must be at least 1, got 0"},
		{"NilSink", func() { discover.WithMetrics(nil) }, "discover.WithMetrics: nil sink"},
		{"TypedNilSink", func() { discover.WithMetrics((*metrics.Counts)(nil)) }, "discover.WithMetrics: nil sink"},
		{"NilOption", func() { discover.NewDNS(r, "h", 80, time.Second, mk, nil) }, "discover.NewDNS: option 0 is nil"},
		{"ListTypedNil", func() { discover.NewList(&net.Resolver{}, nil) }, "discover.NewList: service 1 is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}

	// An interval of MaxInt64 never comes: one lookup, and then Next waits
	// until its context ends.
	t.Run("IntervalMax", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newFake(ips("10.0.0.1"))
			d := discover.NewDNS(r, "h", 80, math.MaxInt64, (&maker{}).make)
			d.Next(t.Context())
			ctx, cancel := context.WithTimeout(t.Context(), 1000*time.Hour)
			defer cancel()
			start := time.Now()
			if _, err := d.Next(ctx); err != context.DeadlineExceeded || time.Since(start) != 1000*time.Hour {
				t.Errorf("got %v after %v, want %v after 1000h", err, time.Since(start), context.DeadlineExceeded)
			}
			if at, _ := r.lookups(); len(at) != 1 {
				t.Errorf("got %d lookups, want 1", len(at))
			}
		})
	})
	// A cap of MaxInt64 is no cap.
	t.Run("MaxEndpointsMax", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := discover.NewDNS(newFake(manyIPs(3000)), "h", 80, time.Second, (&maker{}).make, discover.WithMaxEndpoints(math.MaxInt64))
			d.Next(t.Context())
			if reports, inserts, _ := drain(t, d); len(reports) != 0 || inserts != 2999 {
				t.Errorf("got reports %q and %d more inserts, want none and 2999", reports, inserts)
			}
		})
	})
	// A port at either bound is a port.
	for _, port := range []int{1, 65535} {
		t.Run(fmt.Sprintf("Port%d", port), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := discover.NewDNS(newFake(ips("10.0.0.1")), "h", port, time.Second, (&maker{}).make)
				if got, want := show(d.Next(t.Context())), fmt.Sprintf("Insert 10.0.0.1:%d svc(10.0.0.1:%d)", port, port); got != want {
					t.Errorf("got %s, want %s", got, want)
				}
			})
		})
	}
}

// A cap of one address is allowed, the smallest: the lowest address is
// kept, and the rest reported as left out.
func TestDNSCapOfOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFake(ips("10.0.0.3", "10.0.0.1", "10.0.0.2"))
		d := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make, discover.WithMaxEndpoints(1))
		checkSteps(t, nextN(t.Context(), d, time.Now(), 2), []step{
			{"error: discover: lookup b: found 3 addresses, more than the cap of 1: 2 left out", 0},
			{"Insert 10.0.0.1:80 svc(10.0.0.1:80)", 0},
		})
	})
}
