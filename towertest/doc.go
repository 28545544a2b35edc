// Package towertest provides tools for testing services and middleware
// built on package tower, as net/http/httptest does for handlers. Start
// with [NewMock]: a [Mock] is a service whose readiness and answers the
// test controls through its [Handle].
//
//	mock, h := towertest.NewMock[string, string]()
//	svc := limit.NewConcurrency(mock, 1)
//	h.Allow(0) // the mock is not ready: Ready waits
//	...
//	h.Allow(1)                              // one request may go through
//	h.Expect(t, "hello").Respond("world")   // receive it and answer it
//
// Under testing/synctest, [GoReady], [GoCall] and [GoRequest] run one
// phase of a service on a goroutine of their own and return its [Outcome]
// once that goroutine has gone as far as it can, and the Handle's
// ExpectSettled and kin check what the mock has seen by then.
//
// [LayerSuite] and [ServiceSuite] check that a layer or a service keeps
// the readiness contract of package tower's doc; every middleware in this
// module runs LayerSuite. [RandomCallers], [Drive] and [CheckBurst] test a
// rate limit against random callers.
package towertest
