package balance_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	towermetrics "github.com/towergo/tower/metrics"
)

// raceEnabled is set by race_test.go when the race detector is on.
var raceEnabled bool

var errFail = errors.New("boom")

// isFailure is the classifier of the tests: a call failed if it has an
// error.
func isFailure(_ string, err error) bool { return err != nil }

// flaky is an endpoint that answers with its name, or fails with errFail:
// each call takes the next answer of its script (true: fail) and, once the
// script is used up, fails while failing is set, or every other call
// (the first included) if alternate is set.
type flaky struct {
	name      string
	mu        sync.Mutex
	script    []bool
	failing   bool
	alternate bool
	calls     int
}

func (f *flaky) call(context.Context, string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	fail := f.failing || f.alternate && f.calls%2 == 1
	if len(f.script) > 0 {
		fail, f.script = f.script[0], f.script[1:]
	}
	if fail {
		return "", errFail
	}
	return f.name, nil
}

func (f *flaky) set(failing bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing = failing
}

func (f *flaky) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// fleet returns n flaky endpoints named "0", "1" and so on.
func fleet(n int) []*flaky {
	fs := make([]*flaky, n)
	for i := range fs {
		fs[i] = &flaky{name: fmt.Sprint(i)}
	}
	return fs
}

// balancerUnderTest is what the tests use of P2C and RoundRobin.
type balancerUnderTest interface {
	tower.Service[string, string]
	Len() int
	ReadyLen() int
	Close() error
}

// newBalancer returns a P2C (seeded) or a RoundRobin over fs.
func newBalancer(kind string, fs []*flaky, opts ...balance.Option) balancerUnderTest {
	if kind == "P2C" {
		eps := make([]endpoint, len(fs))
		for i, f := range fs {
			eps[i] = load.NewConstant[string, string](tower.ServiceFunc[string, string](f.call), 0)
		}
		return balance.NewP2C(list(eps...), append([]balance.Option{balance.WithRand(newRand(1))}, opts...)...)
	}
	eps := make([]tower.Service[string, string], len(fs))
	for i, f := range fs {
		eps[i] = tower.ServiceFunc[string, string](f.call)
	}
	return balance.NewRoundRobin(discover.NewList(eps...), opts...)
}

var kinds = []string{"P2C", "RoundRobin"}

// callN sends n requests through bal, one at a time.
func callN(t *testing.T, bal tower.Service[string, string], n int) {
	t.Helper()
	for range n {
		tower.Call(t.Context(), bal, "x")
	}
}

// callUntil sends requests through bal, one at a time, until done says
// so, and fails t if that takes more than 10000.
func callUntil(t *testing.T, bal tower.Service[string, string], done func() bool) {
	t.Helper()
	for range 10000 {
		if done() {
			return
		}
		tower.Call(t.Context(), bal, "x")
	}
	t.Fatal("the condition did not come within 10000 requests")
}

// ejections records the ejections a balancer reports, with the virtual
// time since it was made.
type ejections struct {
	start time.Time
	mu    sync.Mutex
	list  []string
	keys  []int
}

func newEjections() *ejections { return &ejections{start: time.Now()} }

func (e *ejections) add(err error) {
	if ej, ok := err.(*balance.Ejection[int]); ok {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.list = append(e.list, fmt.Sprintf("%v: %v", time.Since(e.start), ej))
		e.keys = append(e.keys, ej.Key)
	}
}

func (e *ejections) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.list)
}

func (e *ejections) key(i int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.keys[i]
}

func (e *ejections) check(t *testing.T, want ...string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.Equal(e.list, want) {
		t.Errorf("got ejections\n%q\nwant\n%q", e.list, want)
	}
}

// checkOut fails t unless bal has ready endpoints ready and counts says
// that ejected are ejected, once the balancer's goroutines have settled.
func checkOut(t *testing.T, bal balancerUnderTest, counts *towermetrics.Counts, ready, ejected int) {
	t.Helper()
	synctest.Wait()
	if got := bal.ReadyLen(); got != ready {
		t.Errorf("got ReadyLen() = %d, want %d", got, ready)
	}
	if got := counts.Get(towermetrics.Ejected); got != int64(ejected) {
		t.Errorf("got Ejected = %d, want %d", got, ejected)
	}
}

func echoEndpoint() endpoint { return load.NewPendingRequests[string, string](echo) }

func list2(svcs ...tower.Service[string, string]) *discover.List[tower.Service[string, string]] {
	return discover.NewList(svcs...)
}

func nan() float64 { return math.NaN() }
func inf() float64 { return math.Inf(1) }
