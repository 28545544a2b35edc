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
// once that goroutine has gone as far as it can; [Handle.ExpectSettled],
// [Handle.ExpectNoneSettled], [Handle.ExpectIdle] and
// [Handle.ExpectOutstanding] check what the mock has seen by then.
// [MustReady], [ReadyNow] and [CallThrough] are one-line forms of getting a
// permit, asking for one without waiting, and one round trip to the mock.
//
// [LayerSuite] and [ServiceSuite] are conformance suites: they check that a
// layer or a service keeps the readiness contract written in package
// tower's doc. Every middleware in this module runs LayerSuite, with
// NewLayer, Request and Response set. Each test runs in a testing/synctest
// bubble, in virtual time, and fails if it leaves a goroutine behind.
//
// For a rate limit, [RandomCallers] makes a run of callers that arrive at
// random and wait, give up, hold or release their permits at random,
// [Drive] runs them through a service, and [CheckBurst] checks a token
// bucket's bound over every pair of the admissions.
package towertest
