// Package discover describes a changing set of endpoints as a keyed stream
// of changes, tower's Discover: each [Change] inserts an endpoint under a
// key or removes the key. A load balancer (package balance) consumes the
// stream and spreads requests over the endpoints it describes.
//
// A [Discover] is an interface with one blocking method, Next(ctx), rather
// than a channel: its consumer calls it in a loop on a goroutine of its own
// and stops it by ending ctx, so nothing is left running when the consumer
// is closed. Next with a context that is already done asks "is there a
// change now?", as a service's Ready does; a balancer uses that to take in
// a static list synchronously when it is built.
//
// Three Discovers come with the package:
//
//   - [List]: a fixed set, keyed by index (tower's ServiceList).
//   - [Chan]: changes sent on a channel, for discovery that pushes.
//   - [DNS]: the addresses a name resolves to (A/AAAA with [NewDNS], SRV
//     with [NewDNSSRV]), looked up again on an interval and compared with
//     the last set by key. A failed lookup is reported and changes nothing:
//     the last good set stays. The set holds at most
//     [DefaultMaxEndpoints] endpoints ([WithMaxEndpoints]); a lookup that
//     finds more is reported as a [TruncatedError], and the addresses left
//     out are counted by the sink of [WithMetrics]. The [Resolver] is an
//     interface that *net.Resolver satisfies, so tests can give a fake one.
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
// # Errors and the end of the stream
//
// Next returns io.EOF when the set will not change any more; a List does
// after its last Insert. Any other error is a report: the set is
// unchanged, and the consumer may call Next again. A balancer passes the
// reports to its error handler and carries on with the endpoints it has.
// A DNS Discover writes no log by default; given a *slog.Logger with
// [WithLogger], it logs each report it returns.
//
// A DNS Discover recovers a panic in its Resolver or in the function that
// makes a service, and reports it as a failed lookup or a failed service:
// a bug there does not stop the discovery. A balancer that meets a panic
// in any other Discover's Next reports it and stops asking that Discover
// (package balance).
//
// # Duplicate keys
//
// An Insert of a key already in the set replaces the endpoint under it: a
// balancer drops the old one, giving back the reservation it held, and
// uses the new one. A Remove of a key that is not in the set does nothing.
package discover
