package proxy

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
)

var errProbe = errors.New("probe failed")

// A backend checked every second, fall 3 and rise 2, that fails its
// checks from 0s to 5s and passes them after: its checks at 0s, 1s and 2s
// fail, and it is down from 2s; those at 5s and 6s pass, and it is up
// from 6s. A pass between failures starts the count again: failing at
// 10s, 11s, passing at 12s, failing at 13s, 14s keeps it up.
func TestCheckerRiseAndFall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		failing := func(at time.Duration) bool {
			switch {
			case at < 5*time.Second:
				return true
			case at >= 10*time.Second && at < 15*time.Second:
				return at != 12*time.Second
			}
			return false
		}
		type change struct {
			at time.Duration
			up bool
		}
		var changes []change
		c := newChecker(func(context.Context) error {
			if failing(time.Since(start)) {
				return errProbe
			}
			return nil
		}, Health{Interval: Duration(time.Second), Timeout: Duration(time.Second), Rise: 2, Fall: 3}, func(up bool, err error) {
			changes = append(changes, change{time.Since(start), up})
		})
		if !c.isUp() {
			t.Fatal("a new backend is down, want up")
		}
		go c.run()
		time.Sleep(20 * time.Second)
		c.close()
		synctest.Wait()
		want := []change{{2 * time.Second, false}, {6 * time.Second, true}}
		if len(changes) != len(want) || changes[0] != want[0] || changes[1] != want[1] {
			t.Errorf("got changes %v, want %v", changes, want)
		}
	})
}

// A check that takes longer than its timeout fails: its ctx ends then.
func TestCheckerTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var took []time.Duration
		c := newChecker(func(ctx context.Context) error {
			began := time.Now()
			<-ctx.Done()
			took = append(took, time.Since(began))
			return ctx.Err()
		}, Health{Interval: Duration(time.Second), Timeout: Duration(300 * time.Millisecond), Rise: 1, Fall: 1}, func(bool, error) {})
		go c.run()
		time.Sleep(500 * time.Millisecond) // the first check ended at 300ms
		c.close()
		synctest.Wait()
		if len(took) != 1 || took[0] != 300*time.Millisecond || c.isUp() {
			t.Errorf("got checks of %v, up %v; want one of 300ms, down", took, c.isUp())
		}
	})
}

// The gate of a backend down: Ready waits until it is up again, or its
// ctx ends; a permit taken while up and called after it went down is
// refused with errBackendDown, and the endpoint's permit given back.
func TestGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(func(context.Context) error { return nil }, Health{Rise: 1, Fall: 1}, func(bool, error) {})
		calls, released := 0, 0
		inner := tower.ServiceFunc[*http.Request, *http.Response](func(context.Context, *http.Request) (*http.Response, error) {
			calls++
			return &http.Response{StatusCode: 200}, nil
		})
		g := &gated{inner: countReleases{inner, &released}, c: c}
		held, err := g.Ready(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c.record(errProbe) // down
		if _, err := held.Call(t.Context(), nil); err != errBackendDown || !tower.IsUnavailable(err) || calls != 0 || released != 1 {
			t.Errorf("a permit of before: got %v, %d calls, %d released; want errBackendDown, 0, 1", err, calls, released)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := g.Ready(ctx); err != context.DeadlineExceeded {
			t.Errorf("Ready while down: got %v, want the ctx's deadline", err)
		}
		ready := make(chan time.Duration)
		began := time.Now()
		go func() {
			p, err := g.Ready(t.Context())
			if err == nil {
				p.Release()
			}
			ready <- time.Since(began)
		}()
		time.Sleep(2 * time.Second)
		c.record(nil) // up
		if got := <-ready; got != 2*time.Second {
			t.Errorf("Ready returned after %v, want 2s, when the backend came up", got)
		}
	})
}

// countReleases counts the permits of svc released unused.
type countReleases struct {
	svc      tower.Service[*http.Request, *http.Response]
	released *int
}

func (c countReleases) Ready(ctx context.Context) (tower.Permit[*http.Request, *http.Response], error) {
	p, err := c.svc.Ready(ctx)
	if err != nil {
		return p, err
	}
	return tower.NewPermit[*http.Request, *http.Response](releaseCounter{p: &p, n: c.released}, 0), nil
}

type releaseCounter struct {
	p *tower.Permit[*http.Request, *http.Response]
	n *int
}

func (r releaseCounter) CallReserved(ctx context.Context, _ uint64, req *http.Request) (*http.Response, error) {
	return r.p.Call(ctx, req)
}

func (r releaseCounter) ReleaseReserved(uint64) {
	*r.n++
	r.p.Release()
}
