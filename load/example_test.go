package load_test

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/load"
)

// A fresh PeakEwma endpoint costs its default RTT. One slow answer makes
// that answer's RTT the estimate at once: the endpoint is avoided from its
// first slow response.
func ExamplePeakEwma() {
	slow := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		time.Sleep(50 * time.Millisecond)
		return req, nil
	})
	svc := load.NewPeakEwma[string, string](slow, 10*time.Millisecond, 10*time.Second)
	fmt.Printf("fresh: about %.0fms\n", svc.Load()/1e6)

	tower.Call(context.Background(), svc, "hello")
	fmt.Println("after a 50ms answer, above 49ms:", svc.Load() > 49e6)
	// Output:
	// fresh: about 10ms
	// after a 50ms answer, above 49ms: true
}

// stream is a response whose body is read after the call has returned.
type stream struct {
	h *load.Handle
}

// Close ends the request: the endpoint's load drops only now.
func (s *stream) Close() { s.h.Done() }

// trackBody moves each request's Handle into its stream.
type trackBody struct{}

func (trackBody) Track(h *load.Handle, s *stream) *stream {
	s.h = h
	return s
}

// With a Completion, a request counts until its body is closed, not until
// its call returns.
func ExampleWithCompletion() {
	open := tower.ServiceFunc[string, *stream](func(context.Context, string) (*stream, error) {
		return &stream{}, nil
	})
	svc := load.NewPendingRequests[string, *stream](open, load.WithCompletion[*stream](trackBody{}))

	s, _ := tower.Call(context.Background(), svc, "GET /big")
	fmt.Println("pending while the body is read:", svc.Load())
	s.Close()
	fmt.Println("pending after Close:", svc.Load())
	// Output:
	// pending while the body is read: 1
	// pending after Close: 0
}

// A Constant load ranks endpoints by a fixed number.
func ExampleConstant() {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	near := load.NewConstant[string, string](echo, 1)
	far := load.NewConstant[string, string](echo, 5)
	fmt.Println(near.Load() < far.Load())
	// Output:
	// true
}
