package tower_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
)

// greeter answers a name with a greeting.
var greeter = tower.ServiceFunc[string, string](func(_ context.Context, name string) (string, error) {
	if name == "" {
		return "", errors.New("no name")
	}
	return "hello, " + name, nil
})

type user struct{ ID, Name string }

// MapRequest changes the request's type on the way in: the greeter takes
// names, the service built on it takes users.
func ExampleMapRequest() {
	svc := tower.MapRequest(greeter, func(u user) string { return u.Name })
	rsp, err := tower.Call(context.Background(), svc, user{ID: "u1", Name: "Ada"})
	fmt.Println(rsp, err)
	// Output: hello, Ada <nil>
}

// MapResponse changes the response on the way out; an error skips it.
func ExampleMapResponse() {
	svc := tower.MapResponse(greeter, func(s string) int { return len(s) })
	n, err := tower.Call(context.Background(), svc, "Ada")
	fmt.Println(n, err)
	n, err = tower.Call(context.Background(), svc, "")
	fmt.Println(n, err)
	// Output:
	// 10 <nil>
	// 0 no name
}

// MapErr says where an error came from, for errors from Call and for a
// broken service's error from Ready. A caller's own ctx error from Ready is
// left as it is, so ReadyNow still tells "busy" from "broken".
func ExampleMapErr() {
	limited := limit.NewConcurrency[string, string](greeter, 1)
	svc := tower.MapErr[string, string](limited, func(err error) error {
		return fmt.Errorf("greeter: %w", err)
	})
	_, err := tower.Call(context.Background(), svc, "")
	fmt.Println(err)

	p, _ := svc.Ready(context.Background()) // holds the limit's only permit
	_, ready, err := tower.ReadyNow(svc)
	fmt.Println("ready:", ready, "error:", err)
	p.Release()
	// Output:
	// greeter: no name
	// ready: false error: <nil>
}

// MapResult sees the whole outcome: here it turns one error into a
// response.
func ExampleMapResult() {
	svc := tower.MapResult(greeter, func(rsp string, err error) (string, error) {
		if err != nil && err.Error() == "no name" {
			return "hello, stranger", nil
		}
		return rsp, err
	})
	rsp, err := tower.Call(context.Background(), svc, "")
	fmt.Println(rsp, err)
	// Output: hello, stranger <nil>
}

// AndThen continues with the response of a successful call, under the
// call's ctx: here a second request, to another service.
func ExampleAndThen() {
	names := tower.ServiceFunc[string, string](func(_ context.Context, id string) (string, error) {
		return map[string]string{"u1": "Ada"}[id], nil
	})
	svc := tower.AndThen(names, func(ctx context.Context, name string) (string, error) {
		return tower.Call(ctx, greeter, name)
	})
	rsp, err := tower.Call(context.Background(), svc, "u1")
	fmt.Println(rsp, err)
	_, err = tower.Call(context.Background(), svc, "u2")
	fmt.Println(err)
	// Output:
	// hello, Ada <nil>
	// no name
}

// Then sees every outcome, under the call's ctx: here it falls back on
// another service when the call fails.
func ExampleThen() {
	fallback := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
		return "hello, whoever you are", nil
	})
	svc := tower.Then(greeter, func(ctx context.Context, rsp string, err error) (string, error) {
		if err != nil {
			return tower.Call(ctx, fallback, "")
		}
		return rsp, nil
	})
	rsp, err := tower.Call(context.Background(), svc, "")
	fmt.Println(rsp, err)
	// Output: hello, whoever you are <nil>
}

// Either picks one of two services when the stack is built, from
// configuration; the service returned is the chosen one itself.
func ExampleEither() {
	shout := tower.MapResponse(greeter, strings.ToUpper)
	for _, loud := range []bool{false, true} {
		svc := tower.Either(loud, shout, tower.Service[string, string](greeter))
		rsp, _ := tower.Call(context.Background(), svc, "Ada")
		fmt.Println(rsp)
	}
	// Output:
	// hello, Ada
	// HELLO, ADA
}

// OptionalLayer lets a layer that depends on configuration sit in a
// Builder chain: a nil layer leaves the service as it is.
func ExampleOptionalLayer() {
	for _, loud := range []bool{false, true} {
		var shout tower.Layer[string, string] // nil unless configured
		if loud {
			shout = tower.MapResponseLayer[string](strings.ToUpper)
		}
		svc := stack.New[string, string]().
			Layer(tower.OptionalLayer(shout)).
			Service(greeter)
		rsp, _ := tower.Call(context.Background(), svc, "Ada")
		fmt.Println(rsp)
	}
	// Output:
	// hello, Ada
	// HELLO, ADA
}
