package towerredis

// In-package: it reads a Concurrency's unexported replica id, the prefix of its leases.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/redistest"
)

// leaseChildEnv, set to a Redis address, makes TestLeaseHolderKilled the
// child process: it takes leaseChildHeld leases and holds them, renewing
// them, until it is killed (or, if its parent is gone, for 30s).
const leaseChildEnv = "TOWERREDIS_LEASE_CHILD"

const (
	leaseChildMax  = 3
	leaseChildHeld = 2
	// Each round trip has 100ms, twice the default, so that a busy machine
	// does not make a limit that fails closed refuse; the TTL is the
	// least that timeout allows (MinTTLTimeouts of it).
	leaseChildTimeout = 100 * time.Millisecond
	leaseChildTTL     = MinTTLTimeouts * leaseChildTimeout
)

// A replica in another process takes 2 leases of a limit of 3 and is
// killed with SIGKILL, with no chance to give them back. While it lives,
// it renews them: this process gets the one place left and no more, for
// longer than the TTL. Once it is killed, its leases come back by
// themselves: not before they expire, on Redis's clock, and within about
// a TTL of the kill.
func TestLeaseHolderKilled(t *testing.T) {
	if addr := os.Getenv(leaseChildEnv); addr != "" {
		leaseChild(t, addr)
		return
	}
	srv := redistest.Start(t)
	rdb := leaseClient(t, srv.Addr())
	child := leaseStartChild(t, srv.Addr())

	c := NewConcurrency(leaseEcho, leaseClient(t, srv.Addr()), "crash", leaseChildMax, leaseChildTTL, WithFailMode(FailClosed), WithTimeout(leaseChildTimeout))
	mine, ok := leaseReadyNow(t, c)
	if !ok {
		t.Fatal("the place the child left free was not granted")
	}
	defer mine.Release()
	for start := time.Now(); time.Since(start) < 2*leaseChildTTL; time.Sleep(10 * time.Millisecond) {
		if p, ok := leaseReadyNow(t, c); ok {
			p.Release()
			t.Fatalf("got a place the living child holds, %v into its leases of TTL %v", time.Since(start), leaseChildTTL)
		}
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed := time.Now()
	key := "{" + DefaultPrefix + ":lease:crash}"
	all, err := rdb.ZRangeWithScores(t.Context(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var expiries []int64 // the child's, on Redis's clock, in ms
	for _, z := range all {
		if !strings.HasPrefix(z.Member.(string), c.replica) {
			expiries = append(expiries, int64(z.Score))
		}
	}
	if len(expiries) != leaseChildHeld {
		t.Fatalf("found %d leases of the child's in Redis after it was killed, want %d", len(expiries), leaseChildHeld)
	}
	slices.Sort(expiries)

	var regained []tower.Permit[string, string]
	defer func() {
		for i := range regained {
			regained[i].Release()
		}
	}()
	for len(regained) < leaseChildHeld {
		if time.Since(killed) > leaseChildTTL+2*time.Second {
			t.Fatalf("regained %d of the killed child's %d leases %v after the kill, want all within about a TTL (%v)",
				len(regained), leaseChildHeld, time.Since(killed), leaseChildTTL)
		}
		p, ok := leaseReadyNow(t, c)
		if !ok {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		regained = append(regained, p)
		now, err := rdb.Time(t.Context()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if at, expiry := now.UnixMilli(), expiries[len(regained)-1]; at < expiry {
			t.Errorf("regained lease %d at %d on Redis's clock, before the child's lease expired at %d", len(regained), at, expiry)
		}
	}
	t.Logf("regained the killed child's %d leases %v after the kill (TTL %v)", leaseChildHeld, time.Since(killed), leaseChildTTL)
	if p, ok := leaseReadyNow(t, c); ok {
		p.Release()
		t.Error("got a fourth lease with a limit of 3")
	}
}

// leaseStartChild runs this test binary as the child, which takes its
// leases from the server at addr, and returns once it says it holds them.
// The child is killed when t ends, if it still runs.
func leaseStartChild(t *testing.T, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseHolderKilled$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), leaseChildEnv+"="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	said := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), "held") {
				said <- lines.Text()
				break
			}
		}
		close(said)
	}()
	select {
	case line, ok := <-said:
		if !ok {
			t.Fatal("the child ended without taking its leases")
		}
		if want := fmt.Sprintf("held %d", leaseChildHeld); line != want {
			t.Fatalf("the child said %q, want %q", line, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the child did not take its leases within 20s")
	}
	return cmd
}

// leaseChild is the child process: it takes its leases, says so on
// standard output, and holds them until it is killed.
func leaseChild(t *testing.T, addr string) {
	c := NewConcurrency(leaseEcho, leaseClient(t, addr), "crash", leaseChildMax, leaseChildTTL, WithFailMode(FailClosed), WithTimeout(leaseChildTimeout))
	for range leaseChildHeld {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		p, err := c.Ready(ctx)
		cancel()
		if err != nil || isRefusal(&p) {
			t.Fatalf("child: Ready: %v, a refusal %t; want a lease", err, err == nil)
		}
		defer p.Release()
	}
	fmt.Printf("held %d\n", leaseChildHeld)
	time.Sleep(30 * time.Second) // the parent kills it long before
}
