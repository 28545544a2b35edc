package callall_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/callall"
)

var upper = tower.ServiceFunc[string, string](func(_ context.Context, s string) (string, error) {
	if s == "" {
		return "", errors.New("empty request")
	}
	return strings.ToUpper(s), nil
})

// Up to four requests are in flight at once; the responses come in the
// order of the requests, and a failed request is one item among others.
func ExampleOrdered() {
	reqs := slices.Values([]string{"a", "b", "", "d"})
	for rsp, err := range callall.Ordered(context.Background(), upper, reqs, 4) {
		fmt.Printf("%q %v\n", rsp, err)
	}
	// Output:
	// "A" <nil>
	// "B" <nil>
	// "" empty request
	// "D" <nil>
}

// Responses come as their calls return; here they are sorted for a stable
// output.
func ExampleUnordered() {
	var got []string
	reqs := slices.Values([]string{"x", "y", "z"})
	for rsp, err := range callall.Unordered(context.Background(), upper, reqs, 2) {
		if err != nil {
			fmt.Println(err)
			continue
		}
		got = append(got, rsp)
	}
	slices.Sort(got)
	fmt.Println(got)
	// Output:
	// [X Y Z]
}

// Requests from a channel, until it is closed. Breaking out of the loop
// stops the run: the calls in flight are cancelled and waited for, and the
// requests not yet taken stay in the channel. With one request out at a
// time, the next one is taken only when the loop body is done with the
// last response.
func ExampleOrderedChan() {
	reqs := make(chan string, 10)
	for _, r := range []string{"a", "b", "c", "stop", "e"} {
		reqs <- r
	}
	close(reqs)
	for rsp, err := range callall.OrderedChan(context.Background(), upper, reqs, 1) {
		if err != nil || rsp == "STOP" {
			break
		}
		fmt.Println(rsp)
	}
	fmt.Println("left in the channel:", len(reqs))
	// Output:
	// A
	// B
	// C
	// left in the channel: 1
}
