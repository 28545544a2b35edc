package limit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
)

// Ten requests per hour in bursts of up to three, as x/time/rate's
// NewLimiter(rate.Every(6*time.Minute), 3) would allow: the bucket starts
// full, three calls empty it, and the next token comes six minutes after
// the first was taken. A permit released unused gives its token back.
func ExampleNewBucket() {
	ctx := context.Background()
	svc := limit.NewBucket[string, string](upper, 10, time.Hour, 3)

	for _, req := range []string{"a", "b", "c"} {
		rsp, err := tower.Call(ctx, svc, req)
		fmt.Println(rsp, err)
	}
	_, ready, _ := tower.ReadyNow[string, string](svc)
	fmt.Println("ready for a fourth:", ready)

	// A caller that would rather not wait gives Ready a deadline.
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err := svc.Ready(short)
	fmt.Println(err)
	// Output:
	// A <nil>
	// B <nil>
	// C <nil>
	// ready for a fourth: false
	// context deadline exceeded
}

// A permit released unused gives its token back: with nobody waiting, to
// the bucket, which never holds more than its burst. Only a token that no
// other was taken after goes back: a later taker holds the instant after
// it, so giving it to the next caller would let two through where the
// bucket allows one.
func ExampleBucket_Ready() {
	ctx := context.Background()
	svc := limit.NewBucket[string, string](upper, 1, time.Hour, 2)

	_, _ = tower.Call(ctx, svc, "a") // one of two tokens
	p, _ := svc.Ready(ctx)           // the other
	_, ready, _ := tower.ReadyNow[string, string](svc)
	fmt.Println("ready with both tokens taken:", ready)

	p.Release() // never called, and the last taken: its token goes back
	rsp, err := tower.Call(ctx, svc, "b")
	fmt.Println(rsp, err)
	// Output:
	// ready with both tokens taken: false
	// B <nil>
}

// Each service a layer wraps gets a token bucket of its own: emptying one
// leaves the other full.
func ExampleNewBucketLayer() {
	l := limit.NewBucketLayer[string, string](1, time.Hour, 2)
	a, b := l.Wrap(upper), l.Wrap(upper)
	ready := func(svc tower.Service[string, string]) int {
		n := 0
		for {
			p, ok, _ := tower.ReadyNow(svc)
			if !ok {
				return n
			}
			p.Call(context.Background(), "x")
			n++
		}
	}
	fmt.Println("a:", ready(a), "then b:", ready(b))
	// Output:
	// a: 2 then b: 2
}
