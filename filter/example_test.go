package filter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/filter"
)

var errNoName = errors.New("no name")

// A predicate rejects what the service must not see, and may tidy up what
// it lets through. A rejected request fails with the predicate's own error.
func Example() {
	greeter := tower.ServiceFunc[string, string](func(_ context.Context, name string) (string, error) {
		return "hello, " + name, nil
	})
	svc := filter.New(greeter, func(name string) (string, error) {
		name = strings.TrimSpace(name)
		if name == "" {
			return name, errNoName
		}
		return name, nil
	})
	for _, name := range []string{"  Ada ", " "} {
		rsp, err := tower.Call(context.Background(), svc, name)
		fmt.Printf("%q %v %v\n", rsp, err, errors.Is(err, errNoName))
	}
	// Output:
	// "hello, Ada" <nil> false
	// "" no name true
}

// An async predicate gets the call's ctx, and may ask another service
// before it lets a request through.
func ExampleNewAsync() {
	allowed := tower.ServiceFunc[string, bool](func(_ context.Context, user string) (bool, error) {
		return user == "ada", nil
	})
	greeter := tower.ServiceFunc[string, string](func(_ context.Context, user string) (string, error) {
		return "hello, " + user, nil
	})
	svc := filter.NewAsync(greeter, func(ctx context.Context, user string) (string, error) {
		ok, err := tower.Call(ctx, allowed, user)
		if err == nil && !ok {
			err = fmt.Errorf("%s may not come in", user)
		}
		return user, err
	})
	for _, user := range []string{"ada", "bob"} {
		fmt.Println(tower.Call(context.Background(), svc, user))
	}
	// Output:
	// hello, ada <nil>
	//  bob may not come in
}
