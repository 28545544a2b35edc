// Package towertest provides tools for testing services and middleware
// built on package tower, as net/http/httptest does for handlers.
//
// A [Mock] is a service whose readiness and answers the test controls
// through its [Handle]:
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
// [Handle.ExpectOutstanding] check what the mock has seen by then:
//
//	call := towertest.GoRequest(t.Context(), svc, "hello")
//	h.ExpectSettled(t, "hello").Respond("world")
//	call.ExpectValue(t, "world")
//	call.ExpectElapsed(t, 0) // in virtual time
//
// [MustReady], [ReadyNow] and [CallThrough] are the one-line forms of what
// tests do most: get a permit, ask for one without waiting, and send one
// request through to the mock and back.
//
// [LayerSuite] and [ServiceSuite] are conformance suites: they check that a
// layer or a service keeps the readiness contract written in package
// tower's doc. Every middleware in this module runs LayerSuite:
//
//	func TestConformance(t *testing.T) {
//		towertest.LayerSuite[string, string]{
//			NewLayer: func() tower.Layer[string, string] { return mylayer.New[string, string]() },
//			Request:  "hello",
//			Response: "world",
//		}.Run(t)
//	}
//
// The suites run each test inside a testing/synctest bubble, so they work in
// virtual time and fail a test that leaves a goroutine behind.
//
// For a rate limit, [RandomCallers] makes a run of callers that arrive at
// random and wait, give up, hold or release their permits at random,
// [Drive] runs them through a service, and [CheckBurst] checks a token
// bucket's bound over every pair of the admissions:
//
//	callers := towertest.RandomCallers(seed, 60, 3*time.Second, 300*time.Millisecond)
//	at := towertest.Drive(svc, callers, func(towertest.Caller) string { return "x" })
//	if err := towertest.CheckBurst(at, burst, interval, 0); err != nil {
//		t.Fatal(err)
//	}
package towertest
