package tower_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/stack"
)

// The two phases: Ready reserves capacity, the permit's Call uses it. The
// deferred Release gives the capacity back if the call never happens, and
// does nothing after it.
func Example() {
	var svc tower.Service[string, string] = tower.ServiceFunc[string, string](
		func(_ context.Context, req string) (string, error) { return strings.ToUpper(req), nil })

	ctx := context.Background()
	p, err := svc.Ready(ctx) // waits here while the service is full
	if err != nil {
		fmt.Println("not ready:", err)
		return
	}
	defer p.Release()
	rsp, err := p.Call(ctx, "hello")
	fmt.Println(rsp, err)
	// Output: HELLO <nil>
}

// trace is a middleware that prints what it sees on each phase: Ready on
// the way in, Call on the way in, and the response on the way out. It shows
// how to write a middleware whose permits wrap the inner service's.
type trace struct {
	name  string
	inner tower.Service[string, string]
	wraps tower.WrapPool[string, string]
}

func traceLayer(name string) tower.Layer[string, string] {
	return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
		return &trace{name: name, inner: inner}
	})
}

func (t *trace) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	fmt.Println("ready:", t.name)
	p, err := t.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return t.wraps.Wrap(t, p), nil
}

func (t *trace) CallWrapped(ctx context.Context, inner tower.Permit[string, string], req string) (string, error) {
	fmt.Println("call:", t.name)
	rsp, err := inner.Call(ctx, req)
	fmt.Println("response:", t.name)
	return rsp, err
}

func (t *trace) ReleaseWrapped(inner tower.Permit[string, string]) { inner.Release() }

func handler(_ context.Context, req string) (string, error) {
	fmt.Println("handler:", req)
	return req, nil
}

// Layers listed first are outermost: they see readiness and the request
// first, and the response last.
func ExampleStack() {
	svc := tower.Stack(traceLayer("outer"), traceLayer("middle"), traceLayer("inner")).
		Wrap(tower.ServiceFunc[string, string](handler))
	tower.Call(context.Background(), svc, "hello")
	// Output:
	// ready: outer
	// ready: middle
	// ready: inner
	// call: outer
	// call: middle
	// call: inner
	// handler: hello
	// response: inner
	// response: middle
	// response: outer
}

// A Builder adds layers one at a time, the first added outermost. It is a
// value: extending it leaves the original as it was.
func ExampleBuilder() {
	base := stack.New[string, string]().Layer(traceLayer("outer"))
	svc := base.Layer(traceLayer("inner")).Service(tower.ServiceFunc[string, string](handler))
	tower.Call(context.Background(), svc, "hello")

	fmt.Println("--")
	// base still holds one layer.
	tower.Call(context.Background(), base.Service(tower.ServiceFunc[string, string](handler)), "again")
	// Output:
	// ready: outer
	// ready: inner
	// call: outer
	// call: inner
	// handler: hello
	// response: inner
	// response: outer
	// --
	// ready: outer
	// call: outer
	// handler: again
	// response: outer
}

// ReadyNow asks whether a service can take a request without waiting, which
// is how a load shedder decides.
func ExampleReadyNow() {
	svc := tower.ServiceFunc[string, string](handler)
	p, ok, err := tower.ReadyNow(svc)
	fmt.Println(ok, err)
	p.Release()
	// Output: true <nil>
}
