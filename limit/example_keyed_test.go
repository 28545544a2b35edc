package limit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
)

// Each tenant, the part of the request before the slash, may send 2
// requests at once and then one a minute. A request over its tenant's
// limit is refused at once, with how long until its tenant's next token:
// what a server sends as Retry-After with its 429.
func ExampleNewKeyed() {
	handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return "done " + req, nil
	})
	tenant := func(req string) string {
		name, _, _ := strings.Cut(req, "/")
		return name
	}
	svc := limit.NewKeyed(handler, tenant, 1, time.Minute, 2)

	for _, req := range []string{"acme/1", "acme/2", "acme/3", "globex/1"} {
		res, err := tower.Call(context.Background(), svc, req)
		if e, ok := errors.AsType[*limit.KeyLimitError](err); ok {
			fmt.Printf("%s: refused (throttled: %t), retry after %v\n",
				req, tower.IsThrottled(err), e.Wait.Round(time.Second))
			continue
		}
		fmt.Println(res)
	}
	// Output:
	// done acme/1
	// done acme/2
	// acme/3: refused (throttled: true), retry after 1m0s
	// done globex/1
}

// A Keyed as a layer, with a cap on the keys it keeps and a short wait for
// a key's token in Call: a client just over its rate is slowed down
// rather than refused.
func ExampleNewKeyedLayer() {
	clientIP := func(req string) string { return req }
	svc := stack.New[string, string]().
		Layer(limit.NewKeyedLayer[string, string](clientIP, 100, time.Second, 10,
			limit.WithMaxKeys(50_000), limit.WithMaxWait(20*time.Millisecond))).
		Layer(limit.NewConcurrencyLayer[string, string](64)).
		Service(tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			return "hello " + req, nil
		}))

	res, err := tower.Call(context.Background(), svc, "192.0.2.7")
	fmt.Println(res, err)
	// Output:
	// hello 192.0.2.7 <nil>
}
