// Package load measures how loaded a service is, so that a balancer can
// send each request to the less loaded of two endpoints (package balance).
// Use [NewPeakEwma] around each endpoint: a backend that turns slow is
// avoided from its first slow answer, and an idle one is tried again as
// its estimate decays. [NewPendingRequests] counts requests in flight, and
// [NewConstant] gives a fixed load, for random choice and for tests.
//
// Each metric is a [Service]: a [tower.Service] whose Load method reports
// a float64, the smaller the less loaded. It sits directly around each
// endpoint, inside the balancer, so that it sees exactly the requests sent
// to that endpoint:
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
// A request counts, and its round trip runs, from the moment its permit is
// called until its Call returns; a permit reserved and not called does not
// count. When the real end comes later, as with a response body read after
// the call, a [Completion] given with [WithCompletion] decides it.
package load
