package balance_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

type (
	permit   = tower.Permit[string, string]
	handle   = towertest.Handle[string, string]
	endpoint = load.Service[string, string]
)

// errs collects what a balancer reports.
type errs struct {
	mu   sync.Mutex
	list []string
	last error
}

func (e *errs) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, fmt.Sprintf("%T: %v", err, err))
	e.last = err
}

// lastPanic returns the PanicError in the last report, or nil.
func (e *errs) lastPanic() *tower.PanicError {
	e.mu.Lock()
	defer e.mu.Unlock()
	var pe *tower.PanicError
	errors.As(e.last, &pe)
	return pe
}

func (e *errs) check(t *testing.T, want ...string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if fmt.Sprint(e.list) != fmt.Sprint(want) {
		t.Errorf("got reports %q, want %q", e.list, want)
	}
}

// constMock returns a mock with a constant load, granting n reservations
// (-1: any number).
func constMock(n int, l float64) (endpoint, *handle) {
	m, h := towertest.NewMock[string, string]()
	if n >= 0 {
		h.Allow(n)
	}
	return load.NewConstant[string, string](m, l), h
}

// list is a discover.List of endpoints.
func list(eps ...endpoint) *discover.List[endpoint] { return discover.NewList(eps...) }

// readyNowSettled reports whether svc has an endpoint ready now, once the
// balancer's goroutines have taken in what discovery and the endpoints
// told them, releasing the permit it gets. It fails t on an error.
func readyNowSettled(t *testing.T, svc tower.Service[string, string]) bool {
	t.Helper()
	synctest.Wait()
	p, ok := towertest.ReadyNow(t, svc)
	p.Release()
	return ok
}

// readySettled gets a permit from svc, once the balancer's goroutines have
// taken in what discovery and the endpoints told them, or fails t. Which
// endpoint the permit is for depends on what the balancer knows.
func readySettled(t *testing.T, svc tower.Service[string, string]) permit {
	t.Helper()
	synctest.Wait()
	return towertest.MustReady(t, svc)
}

// callWhich calls p with req on its own goroutine, finds which of handles
// received it, answers with that handle's name, and returns the name. It
// fails t unless exactly one did and the call returned its answer.
func callWhich(t *testing.T, p permit, req string, handles map[string]*handle) string {
	t.Helper()
	call := towertest.GoCall(t.Context(), p, req)
	got := ""
	for name, h := range handles {
		if r, ok := h.TryNext(); ok {
			if got != "" {
				t.Fatalf("request reached both %s and %s", got, name)
			}
			if r.Value != req {
				t.Errorf("%s got request %q, want %q", name, r.Value, req)
			}
			r.Respond(name)
			got = name
		}
	}
	if got == "" {
		t.Fatal("no endpoint received the request")
	}
	call.ExpectValue(t, got)
	return got
}

// script is a Rand that returns its numbers in order.
type script struct {
	t    *testing.T
	nums []int
}

func (s *script) IntN(n int) int {
	if len(s.nums) == 0 {
		s.t.Errorf("IntN(%d) called with the script used up", n)
		return 0
	}
	x := s.nums[0]
	s.nums = s.nums[1:]
	if x >= n {
		s.t.Errorf("script gives %d for IntN(%d)", x, n)
	}
	return x
}

// answer is one answer of a scripted Discover.
type answer struct {
	ch  discover.Change[int, endpoint]
	err error
}

// scripted is a Discover whose answers the test sends on a channel.
type scripted chan answer

func (s scripted) Next(ctx context.Context) (discover.Change[int, endpoint], error) {
	select {
	case a := <-s:
		return a.ch, a.err
	default:
	}
	select {
	case a := <-s:
		return a.ch, a.err
	case <-ctx.Done():
		return discover.Change[int, endpoint]{}, ctx.Err()
	}
}

func insert(k int, s endpoint) answer {
	return answer{ch: discover.Change[int, endpoint]{Kind: discover.Insert, Key: k, Service: s}}
}

func remove(k int) answer {
	return answer{ch: discover.Change[int, endpoint]{Kind: discover.Remove, Key: k}}
}
