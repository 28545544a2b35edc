package limit_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
)

var upper = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return strings.ToUpper(req), nil
})

// Each permit is a request in flight. With both permits held, the limit is
// not ready now; a permit given back, used or not, makes it ready again.
func ExampleConcurrency() {
	ctx := context.Background()
	svc := limit.NewConcurrency[string, string](upper, 2)

	p1, _ := svc.Ready(ctx)
	p2, _ := svc.Ready(ctx)
	_, ready, _ := tower.ReadyNow[string, string](svc)
	fmt.Println("ready with two in flight:", ready)

	rsp, _ := p1.Call(ctx, "hello") // the permit is given back when Call returns
	fmt.Println(rsp, "- permits free:", svc.Semaphore().Available())
	p2.Release() // reserved but never called
	fmt.Println("permits free:", svc.Semaphore().Available())
	// Output:
	// ready with two in flight: false
	// HELLO - permits free: 1
	// permits free: 2
}

// Two services under one Semaphore share its limit: a permit held on one is
// missing on the other.
func ExampleNewSharedConcurrencyLayer() {
	sem := limit.NewSemaphore(1)
	l := limit.NewSharedConcurrencyLayer[string, string](sem)
	a, b := l.Wrap(upper), l.Wrap(upper)

	p, _, _ := tower.ReadyNow(a)
	_, ready, _ := tower.ReadyNow(b)
	fmt.Println("b ready while a holds the permit:", ready)
	p.Release()
	q, ready, _ := tower.ReadyNow(b)
	fmt.Println("b ready after a gave it back:", ready)
	q.Release()
	// Output:
	// b ready while a holds the permit: false
	// b ready after a gave it back: true
}

// Three requests per hour: the first Ready opens the window, three calls
// fill it, and the fourth would wait until the hour is over.
func ExampleRate() {
	ctx := context.Background()
	svc := limit.NewRate[string, string](upper, 3, time.Hour)

	for _, req := range []string{"a", "b", "c"} {
		rsp, err := tower.Call(ctx, svc, req)
		fmt.Println(rsp, err)
	}
	_, ready, _ := tower.ReadyNow[string, string](svc)
	fmt.Println("ready for a fourth:", ready)

	// A caller that would rather not wait gives Ready a deadline.
	ctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err := svc.Ready(ctx)
	fmt.Println(err)
	// Output:
	// A <nil>
	// B <nil>
	// C <nil>
	// ready for a fourth: false
	// context deadline exceeded
}
