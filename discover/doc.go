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
// is closed. As with a service's Ready, Next with a done context asks "is
// there a change now?"; a balancer takes in a static list that way when it
// is built.
//
// Next returns io.EOF when the set will not change any more. Any other
// error is a report: the set is unchanged, and the consumer may call Next
// again; a balancer passes reports to its error handler. A DNS Discover
// recovers a panic in its Resolver or its service function and reports it
// like a failure, so a bug there does not stop the discovery.
//
// An Insert of a key already in the set replaces its endpoint: a balancer
// drops the old one, giving back the reservation it held. A Remove of a
// key not in the set does nothing.
package discover
