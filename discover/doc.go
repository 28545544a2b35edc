// Package discover describes a changing set of endpoints as a keyed stream
// of changes, tower's Discover, for a load balancer (package balance) to
// consume. Use [NewList] for a fixed set, [NewDNS] or [NewDNSSRV] for the
// addresses a name resolves to, or [Chan] for changes pushed on a channel.
//
// A DNS Discover needs a function that makes the endpoint for an address;
// wrapping it in a load metric (package load) there gives a balancer what
// it compares:
//
//	d := discover.NewDNS(nil, "backend.internal", 8080, 10*time.Second,
//		func(addr string) (load.Service[*Req, *Res], error) {
//			return load.NewPeakEwma(dial(addr), 30*time.Millisecond, 10*time.Second), nil
//		})
//	bal := balance.NewP2C(d)
//	defer bal.Close()
//
// A [Discover] is an interface with one blocking method, Next(ctx), rather
// than a channel: its consumer calls it in a loop on a goroutine of its own
// and stops it by ending ctx, so nothing is left running when the consumer
// is closed. Next returns io.EOF when the set will not change any more;
// any other error is a report, after which the set is unchanged.
package discover
