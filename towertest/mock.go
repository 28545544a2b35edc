package towertest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/option"
)

// ErrClosed is returned by a [Mock] whose [Handle] was closed.
var ErrClosed = errors.New("service closed")

// A Mock is a [tower.Service] driven by its [Handle]: the handle decides when
// Ready grants capacity or fails, receives every request, and answers it.
// A Mock starts out always ready. It is safe for concurrent use and starts
// no goroutines.
type Mock[Req, Res any] struct {
	h *Handle[Req, Res]
}

// A Handle controls a [Mock] from the test.
type Handle[Req, Res any] struct {
	mu          sync.Mutex
	allowed     int   // grants left; negative means unlimited
	readyErr    error // the next Ready fails with it, once
	readyPanic  any   // the next Ready panics with it, once
	closed      bool
	outstanding int // permits issued and not yet called or released
	calls       int
	queue       []*Request[Req, Res]
	changed     chan struct{} // closed and replaced when any of the above changes
}

// NewMock returns a Mock that is always ready, and its Handle.
func NewMock[Req, Res any]() (*Mock[Req, Res], *Handle[Req, Res]) {
	h := &Handle[Req, Res]{allowed: -1, changed: make(chan struct{})}
	return &Mock[Req, Res]{h: h}, h
}

// Ready grants a permit while the handle allows it, waiting otherwise. It
// fails with the handle's error after [Handle.FailReady], panics after
// [Handle.PanicReady], and fails with [ErrClosed] after [Handle.Close].
func (m *Mock[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	h := m.h
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return tower.Permit[Req, Res]{}, ErrClosed
		}
		if err := h.readyErr; err != nil {
			h.readyErr = nil
			h.mu.Unlock()
			return tower.Permit[Req, Res]{}, err
		}
		if v := h.readyPanic; v != nil {
			h.readyPanic = nil
			h.mu.Unlock()
			panic(v)
		}
		if h.allowed != 0 {
			if h.allowed > 0 {
				h.allowed--
			}
			h.outstanding++
			h.mu.Unlock()
			r := &mockPermit[Req, Res]{h: h}
			return tower.NewPermit(r, r.Token()), nil
		}
		changed := h.changed
		h.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return tower.Permit[Req, Res]{}, ctx.Err()
		}
	}
}

// mockPermit is one reservation on a Mock.
type mockPermit[Req, Res any] struct {
	tower.Ticket
	h *Handle[Req, Res]
}

func (p *mockPermit[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	p.MustRedeem(token)
	h := p.h
	r := &Request[Req, Res]{Value: req, ctx: ctx, answer: make(chan answer[Res], 1)}
	h.mu.Lock()
	h.outstanding--
	h.calls++
	h.queue = append(h.queue, r)
	h.notify()
	h.mu.Unlock()

	select {
	case a := <-r.answer:
		return a.give()
	case <-ctx.Done():
	}
	// An answer that is already there wins over the cancellation.
	select {
	case a := <-r.answer:
		return a.give()
	default:
		var zero Res
		return zero, ctx.Err()
	}
}

func (p *mockPermit[Req, Res]) ReleaseReserved(token uint64) {
	if !p.Redeem(token) {
		return
	}
	h := p.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outstanding--
	if h.allowed >= 0 { // a reservation given back is capacity given back
		h.allowed++
		h.notify()
	}
}

// Allow makes the next n Ready calls succeed, and then makes Ready wait. It
// replaces any earlier allowance, and wakes goroutines waiting in Ready.
// n must not be negative.
func (h *Handle[Req, Res]) Allow(n int) {
	option.PanicIf(n < 0, "towertest: Allow(%d): n must not be negative", n)
	h.set(func() { h.allowed = n })
}

// AllowAll makes every Ready succeed, as in a new Mock.
func (h *Handle[Req, Res]) AllowAll() { h.set(func() { h.allowed = -1 }) }

// FailReady makes the next Ready, or one waiting now, fail with err.
func (h *Handle[Req, Res]) FailReady(err error) { h.set(func() { h.readyErr = err }) }

// PanicReady makes the next Ready, or one waiting now, panic with v, on
// the goroutine that called it, as an inner service with a bug would. v
// must not be nil.
func (h *Handle[Req, Res]) PanicReady(v any) {
	option.PanicIf(v == nil, "towertest: PanicReady(nil)")
	h.set(func() { h.readyPanic = v })
}

// Close makes every later Ready fail with [ErrClosed].
func (h *Handle[Req, Res]) Close() { h.set(func() { h.closed = true }) }

func (h *Handle[Req, Res]) set(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
	h.notify()
}

// notify wakes the goroutines waiting in Ready or Next. h.mu must be held.
func (h *Handle[Req, Res]) notify() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Outstanding returns the number of permits issued and neither called nor
// released: zero once every reservation has been used or given back.
func (h *Handle[Req, Res]) Outstanding() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outstanding
}

// Calls returns the number of requests the Mock has received.
func (h *Handle[Req, Res]) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// TryNext returns the oldest request not yet taken, if there is one.
func (h *Handle[Req, Res]) TryNext() (*Request[Req, Res], bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.queue) == 0 {
		return nil, false
	}
	r := h.queue[0]
	h.queue = h.queue[1:]
	return r, true
}

// Next waits for the next request and returns it, or returns ctx.Err().
func (h *Handle[Req, Res]) Next(ctx context.Context) (*Request[Req, Res], error) {
	for {
		h.mu.Lock()
		changed := h.changed
		h.mu.Unlock()
		if r, ok := h.TryNext(); ok {
			return r, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Expect waits for the next request and fails t unless its value equals
// want (by reflect.DeepEqual), or if none arrives before the test's
// context ends. Under testing/synctest, use [Handle.ExpectSettled] when
// the request must already be there.
func (h *Handle[Req, Res]) Expect(t testing.TB, want Req) *Request[Req, Res] {
	t.Helper()
	r, err := h.Next(t.Context())
	if err != nil {
		t.Fatalf("waiting for request %v: %v", want, err)
	}
	if !reflect.DeepEqual(r.Value, want) {
		t.Fatalf("got request %v, want %v", r.Value, want)
	}
	return r
}

// ExpectNow fails t unless the oldest request not yet taken is already
// there and equals want (by reflect.DeepEqual), and returns it. It does
// not wait; see [Handle.ExpectSettled].
func (h *Handle[Req, Res]) ExpectNow(t testing.TB, want Req) *Request[Req, Res] {
	t.Helper()
	r, ok := h.TryNext()
	if !ok {
		t.Fatalf("no request has arrived, want %v", want)
	}
	if !reflect.DeepEqual(r.Value, want) {
		t.Fatalf("got request %v, want %v", r.Value, want)
	}
	return r
}

// ExpectNone fails t if a request not yet taken is there. Like ExpectNow,
// it does not wait.
func (h *Handle[Req, Res]) ExpectNone(t testing.TB) {
	t.Helper()
	if r, ok := h.TryNext(); ok {
		t.Fatalf("got request %v, want none", r.Value)
	}
}

// ExpectSettled is [Handle.ExpectNow] after synctest.Wait, once every
// goroutine of the test has run as far as it can; it must run in a
// testing/synctest bubble. Unlike [Handle.Expect], it lets no virtual time
// pass.
func (h *Handle[Req, Res]) ExpectSettled(t testing.TB, want Req) *Request[Req, Res] {
	t.Helper()
	synctest.Wait()
	return h.ExpectNow(t, want)
}

// ExpectNoneSettled is [Handle.ExpectNone] after synctest.Wait. It must
// run in a testing/synctest bubble.
func (h *Handle[Req, Res]) ExpectNoneSettled(t testing.TB) {
	t.Helper()
	synctest.Wait()
	h.ExpectNone(t)
}

// ExpectIdle fails t unless, after synctest.Wait, the Mock has received
// calls requests in all and holds no reservation. It must run in a
// testing/synctest bubble.
func (h *Handle[Req, Res]) ExpectIdle(t testing.TB, calls int) {
	t.Helper()
	synctest.Wait()
	if got := h.Calls(); got != calls {
		t.Errorf("the mock got %d calls, want %d", got, calls)
	}
	h.ExpectOutstanding(t, 0)
}

// ExpectOutstanding fails t unless, after synctest.Wait, the Mock has n
// reservations outstanding (see [Handle.Outstanding]). It must run in a
// testing/synctest bubble.
func (h *Handle[Req, Res]) ExpectOutstanding(t testing.TB, n int) {
	t.Helper()
	synctest.Wait()
	if got := h.Outstanding(); got != n {
		t.Errorf("the mock has %d reservations outstanding, want %d", got, n)
	}
}

// A Request is one request received by a [Mock], waiting for its answer.
type Request[Req, Res any] struct {
	// Value is the request as the Mock received it.
	Value Req

	ctx    context.Context
	answer chan answer[Res]
	once   sync.Once
}

type answer[Res any] struct {
	res   Res
	err   error
	panic any // the call panics with it
}

// give returns the answer, or raises its panic on the calling goroutine.
func (a answer[Res]) give() (Res, error) {
	if a.panic != nil {
		panic(a.panic)
	}
	return a.res, a.err
}

// Context returns the context the request was called with.
func (r *Request[Req, Res]) Context() context.Context { return r.ctx }

// Respond answers the request with res. A request is answered once; later
// answers are ignored. Answering a request whose caller gave up does nothing.
func (r *Request[Req, Res]) Respond(res Res) { r.reply(answer[Res]{res: res}) }

// Fail answers the request with err.
func (r *Request[Req, Res]) Fail(err error) { r.reply(answer[Res]{err: err}) }

// Panic makes the call panic with v, on the goroutine that made it, as a
// service with a bug would. v must not be nil.
func (r *Request[Req, Res]) Panic(v any) {
	option.PanicIf(v == nil, "towertest: Request.Panic(nil)")
	r.reply(answer[Res]{panic: v})
}

func (r *Request[Req, Res]) reply(a answer[Res]) {
	r.once.Do(func() { r.answer <- a })
}
