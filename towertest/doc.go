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
package towertest
