// Package load measures how loaded a service is, so that a balancer can
// send each request to the less loaded of two endpoints (package balance).
// Each metric wraps an endpoint and is itself a [tower.Service] that
// reports its load through [Service]'s Load method: a float64, the smaller
// the less loaded, compared without allocating.
//
//   - [Constant]: a fixed load, for endpoints that should be chosen at
//     random, and for tests.
//   - [PendingRequests]: the number of requests in flight.
//   - [PeakEwma]: the expected latency times the requests in flight, with
//     tower's formula. A backend that turns slow is avoided from its first
//     slow answer, and an idle one is tried again as its estimate decays.
//
// The metric sits directly around each endpoint, inside the balancer, so
// that it sees exactly the requests sent to that endpoint:
//
//	endpoints := discover.NewList[load.Service[string, string]](
//		load.NewPeakEwma(backendA, 30*time.Millisecond, 10*time.Second),
//		load.NewPeakEwma(backendB, 30*time.Millisecond, 10*time.Second),
//	)
//	bal := balance.NewP2C(endpoints)
//	defer bal.Close()
//
// Put per-endpoint middleware (a timeout, a concurrency limit) inside the
// metric: a timeout inside PeakEwma caps the RTTs it measures, and one
// outside it would not be seen at all.
//
// # When a request completes
//
// A request counts from the moment its permit is called until its Call
// returns. When the real end comes later, a response body read after the
// call for instance, a [Completion] given with [WithCompletion] receives
// the request's [Handle] with the response and calls its Done when the
// response is finished. That path allocates the Handle; the default path
// allocates nothing.
package load
