package towerredis_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/towergo/tower/towerredis"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/towerredis/redistest"
)

// The environment of a child process of TestBucketProcesses: the Redis to
// use, and the instant (Unix nanoseconds) to stop at.
const (
	childAddrEnv  = "TOWERREDIS_RATE_CHILD_ADDR"
	childUntilEnv = "TOWERREDIS_RATE_CHILD_UNTIL"
)

// The limit the processes share: 200 a second, 10 at once.
const (
	procNum   = 200
	procBurst = 10
)

// Three processes, each a replica with its own client, share one limit
// for about a second: together they admit no more than the limit allows
// from the first child's first Ready to the last token (the burst and a
// token every 5ms), and not much fewer. Each child is this test binary run again on
// TestBucketProcessChild, which reports what it admitted on its stdout.
func TestBucketProcesses(t *testing.T) {
	srv := redistest.Start(t)
	until := time.Now().Add(1500 * time.Millisecond)
	const children = 3
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		total   int
		firstAt = until // when the first child began asking
		lastAt  = until // when the last token came, if after until
	)
	for i := range children {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBucketProcessChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), childAddrEnv+"="+srv.Addr(), childUntilEnv+"="+strconv.FormatInt(until.UnixNano(), 10))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Errorf("child %d: %v\n%s", i, err, out.String())
				return
			}
			var admitted int
			var began, last int64
			for line := range strings.SplitSeq(out.String(), "\n") {
				if _, err := fmt.Sscanf(strings.TrimSpace(line), "admitted %d began %d last %d", &admitted, &began, &last); err == nil {
					break
				}
			}
			if began == 0 {
				t.Errorf("child %d reported nothing:\n%s", i, out.String())
				return
			}
			t.Logf("child %d admitted %d", i, admitted)
			mu.Lock()
			defer mu.Unlock()
			total += admitted
			if at := time.Unix(0, began); at.Before(firstAt) {
				firstAt = at
			}
			if at := time.Unix(0, last); at.After(lastAt) {
				lastAt = at
			}
		})
	}
	wg.Wait()
	// Ready still grants a token there now to a caller whose deadline
	// passed on its way to Redis: the window ends at the last token.
	window := lastAt.Sub(firstAt)
	budget := procBurst + int(float64(procNum)*window.Seconds())
	t.Logf("%d processes admitted %d, the limit allows %d in the %v from the first child's first Ready", children, total, budget, window.Round(time.Millisecond))
	if total > budget+1 || float64(total) < 0.8*float64(budget) {
		t.Errorf("the processes admitted %d, want at most %d, and at least 80%% of it (the children start one after another)", total, budget)
	}
}

// TestBucketProcessChild is a child process of TestBucketProcesses, and does
// nothing in a test run of its own. It takes tokens of the shared limit
// until the instant it is given, and prints how many it got and when the
// first came.
func TestBucketProcessChild(t *testing.T) {
	addr := os.Getenv(childAddrEnv)
	if addr == "" {
		t.Skip("run by TestBucketProcesses")
	}
	ns, err := strconv.ParseInt(os.Getenv(childUntilEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer c.Close()
	// Failing closed, with a second per round trip: what is measured is
	// the limit, not its fail mode on a busy machine.
	r := towerredis.NewBucket[string, string](okService, c, "processes", procNum, time.Second, procBurst,
		towerredis.WithFailMode(towerredis.FailClosed), towerredis.WithTimeout(time.Second))
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, ns))
	defer cancel()
	var admitted int
	began, last := time.Now().UnixNano(), int64(0)
	for ctx.Err() == nil {
		p, err := r.Ready(ctx)
		if err != nil {
			break
		}
		p.Call(ctx, "x")
		admitted++
		last = time.Now().UnixNano()
	}
	fmt.Printf("admitted %d began %d last %d\n", admitted, began, last)
}
