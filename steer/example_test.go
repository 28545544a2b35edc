package steer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/steer"
	"github.com/towergo/tower/towertest"
)

// Requests are routed by their path. The static service is not ready, and
// never becomes so, but that holds up only requests for it: a request for
// the API goes through at once, and one for a static file gives up when
// its ctx ends.
func Example() {
	api := tower.ServiceFunc[string, string](func(_ context.Context, path string) (string, error) {
		return "api answered " + path, nil
	})
	static, h := towertest.NewMock[string, string]()
	h.Allow(0) // never ready

	svc := steer.New([]tower.Service[string, string]{api, static},
		func(_ context.Context, path string, _ int) int {
			if strings.HasPrefix(path, "/api/") {
				return 0
			}
			return 1
		})

	fmt.Println(tower.Call(context.Background(), svc, "/api/users"))

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a caller that will not wait
	_, err := tower.Call(ctx, svc, "/index.html")
	fmt.Println(err)
	// Output:
	// api answered /api/users <nil>
	// context canceled
}

// A service whose Ready fails is broken for good; the requests picked for
// it fail with an *Error that names it, and the others go on.
func ExampleError() {
	broken, h := towertest.NewMock[string, string]()
	h.FailReady(errors.New("connection refused"))
	ok := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return "ok " + req, nil
	})
	svc := steer.New([]tower.Service[string, string]{ok, broken},
		func(_ context.Context, req string, n int) int { return len(req) % n })

	for _, req := range []string{"ab", "abc", "abcd"} {
		rsp, err := tower.Call(context.Background(), svc, req)
		var se *steer.Error
		if errors.As(err, &se) {
			fmt.Printf("%s: service %d failed: %v\n", req, se.Index, se.Err)
			continue
		}
		fmt.Println(req+":", rsp)
	}
	// Output:
	// ab: ok ab
	// abc: service 1 failed: connection refused
	// abcd: ok abcd
}
