package retry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
)

// flaky fails its first n calls, then answers.
func flaky(n int) tower.ServiceFunc[string, string] {
	calls := 0
	return func(_ context.Context, req string) (string, error) {
		calls++
		if calls <= n {
			return "", fmt.Errorf("attempt %d failed", calls)
		}
		return fmt.Sprintf("%s after %d attempts", req, calls), nil
	}
}

// show prints a call's outcome.
func show[Res any](res Res, err error) {
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("ok:", res)
}

// A StandardPolicy retries errors up to its maximum number of attempts;
// when they run out, the caller gets the last error.
func Example() {
	policy := retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(3))

	svc := retry.New(flaky(2), policy)
	show(tower.Call(context.Background(), svc, "hello"))

	svc = retry.New(flaky(5), policy)
	show(tower.Call(context.Background(), svc, "hello"))
	// Output:
	// ok: hello after 3 attempts
	// error: attempt 3 failed
}

// upload is a request whose body is a stream: sending it reads the body,
// so it can be sent again only if a new body can be made, as with
// net/http's Request.GetBody.
type upload struct {
	Body    io.Reader
	GetBody func() io.Reader // nil if the body cannot be made again
}

// uploadPolicy retries failed uploads whose body can be made again.
type uploadPolicy struct{}

func (uploadPolicy) Clone(req upload) (upload, bool) {
	if req.GetBody == nil {
		return upload{}, false // a stream already read cannot be sent twice
	}
	return upload{Body: req.GetBody(), GetBody: req.GetBody}, true
}

func (uploadPolicy) Retry(_ context.Context, a *retry.Attempt[upload, string]) (time.Duration, bool) {
	return 0, a.Err != nil && a.N < 3
}

// Whether a request can be retried is the policy's decision: Clone says no
// for a request that sending uses up, and that request is tried once.
func ExamplePolicy() {
	attempts := 0
	store := tower.ServiceFunc[upload, string](func(_ context.Context, req upload) (string, error) {
		attempts++
		body, _ := io.ReadAll(req.Body)
		if attempts%2 == 1 {
			return "", errors.New("connection reset")
		}
		return fmt.Sprintf("stored %q", body), nil
	})
	svc := retry.New(store, retry.Policy[upload, string](uploadPolicy{}))

	data := []byte("some data")
	rewindable := upload{
		Body:    bytes.NewReader(data),
		GetBody: func() io.Reader { return bytes.NewReader(data) },
	}
	show(tower.Call(context.Background(), svc, rewindable))

	stream := upload{Body: strings.NewReader("a stream")}
	show(tower.Call(context.Background(), svc, stream))
	fmt.Println("attempts:", attempts)
	// Output:
	// ok: stored "some data"
	// error: connection reset
	// attempts: 3
}

// A PolicyFunc may change the request each retry sends, and the result the
// caller gets.
func ExamplePolicyFunc() {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if !strings.HasSuffix(req, "#3") {
			return "", errors.New("not yet")
		}
		return req, nil
	})
	policy := retry.PolicyFunc[string, string](func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
		if a.Err == nil {
			return 0, false
		}
		if a.N == 5 {
			a.Err = fmt.Errorf("gave up after %d attempts: %w", a.N, a.Err)
			return 0, false
		}
		a.Req = fmt.Sprintf("hello #%d", a.N+1) // the attempt number, as a header would carry it
		return 0, true
	})
	show(tower.Call(context.Background(), retry.New(echo, policy), "hello #1"))

	down := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
		return "", errors.New("not yet")
	})
	show(tower.Call(context.Background(), retry.New(down, policy), "hello #1"))
	// Output:
	// ok: hello #3
	// error: gave up after 5 attempts: not yet
}

// The delays of an ExponentialBackoff without jitter, doubling from min
// up to max, and of a FullJitterBackoff, drawn at random below the same
// bounds. Bad parameters, max below min or a jitter above 100, panic.
func ExampleNewExponentialBackoff() {
	b := retry.NewExponentialBackoff(100*time.Millisecond, time.Second, 0)
	for n := 1; n <= 5; n++ {
		fmt.Print(b.Delay(n), " ")
	}
	fmt.Println()

	full := retry.NewFullJitterBackoff(100*time.Millisecond, time.Second)
	for n := 1; n <= 5; n++ {
		if d := full.Delay(n); d >= b.Delay(n) {
			fmt.Println("a full jitter reached the bound:", d)
		}
	}
	// Output:
	// 100ms 200ms 400ms 800ms 1s
}

// A budget of 20% of requests, plus 1 retry per second over 10 seconds:
// its reserve pays for 10 retries with nothing deposited, and each five
// deposits pay for one more.
func ExampleTPSBudget() {
	b := retry.NewTPSBudget(10*time.Second, 1, 0.2)
	n := 0
	for b.Withdraw() {
		n++
	}
	fmt.Println("retries from the reserve:", n)
	for range 5 {
		b.Deposit()
	}
	fmt.Println("one more after five deposits:", b.Withdraw(), b.Withdraw())
	// Output:
	// retries from the reserve: 10
	// one more after five deposits: true false
}
