package throttle_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/throttle"
)

// script is a Rand that, once armed, returns its values in turn, and
// fails the test if asked for more. Until then, it returns the largest
// number below 1, which rejects nothing.
type script struct {
	t     testing.TB
	mu    sync.Mutex
	vals  []float64
	armed bool
}

func newScriptLater(t testing.TB, vals ...float64) *script { return &script{t: t, vals: vals} }

// arm makes s return its values from now on.
func (s *script) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

func (s *script) Float64() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.armed {
		return math.Nextafter(1, 0)
	}
	if len(s.vals) == 0 {
		s.t.Error("the Throttle drew one number more than the test gave")
		return 0
	}
	v := s.vals[0]
	s.vals = s.vals[1:]
	return v
}

// left returns how many numbers were not drawn.
func (s *script) left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals)
}

// neverRejects is a Rand whose draws are the largest number below 1, so
// that no probability below 1 rejects.
type neverRejects struct{ draws atomic.Int64 }

func (n *neverRejects) Float64() float64 {
	n.draws.Add(1)
	return math.Nextafter(1, 0)
}

// noDraw is a Rand that fails the test if drawn from: the rejection
// probability must be 0.
type noDraw struct{ t testing.TB }

func (n noDraw) Float64() float64 {
	n.t.Error("the Throttle drew a number, want no draw while the probability is 0")
	return 0
}

// backend is a service that accepts requests, answering "ok", or refuses
// them with loadshed.ErrOverloaded, as its refuse flag says. It counts the
// calls it gets. While its closed flag is set, it is not ready: its Ready
// waits for ctx to end.
type backend struct {
	refuse, closed atomic.Bool
	calls          atomic.Int64
}

func (b *backend) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if b.closed.Load() {
		<-ctx.Done()
		return tower.Permit[string, string]{}, ctx.Err()
	}
	return tower.ServiceFunc[string, string](b.call).Ready(ctx)
}

func (b *backend) call(context.Context, string) (string, error) {
	b.calls.Add(1)
	if b.refuse.Load() {
		return "", loadshed.ErrOverloaded
	}
	return "ok", nil
}

// send sends n requests through svc, which must not reject any: the
// backend's refuse flag decides how they are answered.
func send(t testing.TB, svc tower.Service[string, string], n int) {
	t.Helper()
	for range n {
		if _, err := tower.Call(context.Background(), svc, "req"); errors.Is(err, throttle.ErrThrottled) {
			t.Fatal("a request was throttled, want it sent")
		}
	}
}

// counted returns a Throttle over b, which never rejects, and in whose
// window are requests, accepts of them.
func counted(t testing.TB, b *backend, requests, accepts int, opts ...throttle.Option) *throttle.Throttle[string, string] {
	t.Helper()
	opts = append([]throttle.Option{throttle.WithRand(&neverRejects{})}, opts...)
	svc := throttle.New(b, throttle.NotOverloaded, opts...)
	fill(t, svc, b, requests, accepts)
	return svc
}

// fill sends svc requests requests, of which the backend accepts the
// first accepts.
func fill(t testing.TB, svc tower.Service[string, string], b *backend, requests, accepts int) {
	t.Helper()
	b.refuse.Store(false)
	send(t, svc, accepts)
	b.refuse.Store(true)
	send(t, svc, requests-accepts)
	b.refuse.Store(false)
}

// expectProbability fails t unless svc's rejection probability is want,
// exactly.
func expectProbability(t testing.TB, svc *throttle.Throttle[string, string], want float64) {
	t.Helper()
	if got := svc.RejectionProbability(); got != want {
		t.Errorf("rejection probability: got %v, want %v", got, want)
	}
}

// doneCtx is a context that is already done.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// rejected reports whether svc, a Throttle over b, rejects the next
// request, without counting a request it would send: it asks svc's Ready
// with a done context while b is not ready, so that a request that would
// be sent gets no permit, and calls the permit of one rejected, which
// must fail with ErrThrottled.
func rejected(t testing.TB, svc tower.Service[string, string], b *backend) bool {
	t.Helper()
	b.closed.Store(true)
	p, err := svc.Ready(doneCtx)
	b.closed.Store(false)
	if err == context.Canceled {
		return false
	}
	if err != nil {
		t.Fatalf("Ready: got error %v, want a permit or %v", err, context.Canceled)
	}
	if _, err := p.Call(t.Context(), "req"); err != throttle.ErrThrottled {
		t.Fatalf("Call of the permit Ready gave while the inner service was not ready: got %v, want %v", err, throttle.ErrThrottled)
	}
	return true
}
