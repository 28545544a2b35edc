package tower_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/callall"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/filter"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/steer"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// The fault matrix: for each middleware, each piece of user code it runs,
// and each goroutine it runs that code on, a panic and (where the code can
// return one) an error injected there. Each row says who must hear of the
// fault and as what; it checks that every reservation is back and runs in
// a testing/synctest bubble, which fails if a goroutine is left. The
// process surviving is the test binary surviving. The packages' own tests
// go into each case's details; this is the one place that lists them all.
// Run it with -v for the table.

// A fault is what a row injects: a panic with faultValue, or errFault.
type fault struct{ panics bool }

func (f fault) String() string {
	if f.panics {
		return "panic"
	}
	return "error"
}

// faultValue is the injected panic's value: a pointer, so that nothing
// else compares equal to it.
var faultValue = &struct{ name string }{"injected panic"}

var errFault = errors.New("injected error")

// hit is the user code failing: it panics, or returns errFault.
func (f fault) hit() error {
	if f.panics {
		panic(faultValue)
	}
	return errFault
}

// readyFails makes the mock's next Ready (or one waiting now) fail so.
func (f fault) readyFails(h *towertest.Handle[string, string]) {
	if f.panics {
		h.PanicReady(faultValue)
	} else {
		h.FailReady(errFault)
	}
}

// callFails makes the request's call fail so.
func (f fault) callFails(r *towertest.Request[string, string]) {
	if f.panics {
		r.Panic(faultValue)
	} else {
		r.Fail(errFault)
	}
}

// heard says how the injected fault reached a party: "panic" (the panic
// itself, on that party's goroutine), "PanicError" (an error through which
// errors.As finds a *tower.PanicError of it, with its stack), "error" (the
// injected error, or one that wraps it), or what else it got.
func heard(panicked any, err error) string {
	var pe *tower.PanicError
	switch {
	case panicked == any(faultValue):
		return "panic"
	case panicked != nil:
		return fmt.Sprintf("another panic: %v", panicked)
	case errors.As(err, &pe) && pe.Value == any(faultValue) && len(pe.Stack) > 0:
		return "PanicError"
	case errors.Is(err, errFault):
		return "error"
	case err == nil:
		return "nothing"
	}
	return fmt.Sprintf("another error: %v", err)
}

// catch runs f, recovering a panic, and says how the fault reached it.
func catch(f func() error) (got string) {
	defer func() {
		if v := recover(); v != nil {
			got = heard(v, nil)
		}
	}()
	return heard(nil, f())
}

// goCatch is catch on a goroutine of its own.
func goCatch(f func() error) *towertest.Outcome[string] {
	return towertest.Go(func() (string, error) { return catch(f), nil })
}

// call sends req through svc, Ready then Call.
func call(ctx context.Context, svc tower.Service[string, string]) func() error {
	return func() error {
		_, err := tower.Call(ctx, svc, "hello")
		return err
	}
}

// answerNext answers the next request the mock gets with "world".
func answerNext(t *testing.T, h *towertest.Handle[string, string]) {
	t.Helper()
	r, err := h.Next(t.Context())
	if err != nil {
		t.Fatalf("no request reached the inner service: %v", err)
	}
	r.Respond("world")
}

// serves checks that svc answers a request through the mock again.
func serves(t *testing.T, svc tower.Service[string, string], h *towertest.Handle[string, string]) {
	t.Helper()
	o := towertest.Go(func() (string, error) { return tower.Call(t.Context(), svc, "hello") })
	answerNext(t, h)
	if res, err := o.Wait(); res != "world" || err != nil {
		t.Errorf("after the fault: got %q, %v; want %q, nil", res, err, "world")
	}
}

// A faultRow is one line of the matrix.
type faultRow struct {
	middleware, code, goroutine string
	// wantPanic and wantError are who hears of an injected panic, and of
	// an injected error, and as what: "caller: panic". An empty wantError
	// means the code cannot return an error.
	wantPanic, wantError string
	// run injects f and returns who heard of it, and as what.
	run func(t *testing.T, f fault) string
}

func TestFaultMatrix(t *testing.T) {
	for _, row := range faultRows() {
		for _, f := range []fault{{panics: true}, {panics: false}} {
			want := row.wantPanic
			if !f.panics {
				want = row.wantError
			}
			if want == "" {
				continue
			}
			name := fmt.Sprintf("%s/%s/%s/%v", row.middleware, row.code, row.goroutine, f)
			t.Run(name, func(t *testing.T) {
				var got string
				synctest.Test(t, func(t *testing.T) { got = row.run(t, f) })
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
				t.Logf("| %s | %s | %s | %s | %s |", row.middleware, row.code, row.goroutine, f, got)
			})
		}
	}
}

func faultRows() []faultRow {
	rows := []faultRow{
		{"limit.Concurrency", "inner Ready", "caller", "caller: panic", "caller: error", limitReady},
		{"limit.Concurrency", "inner Call", "caller", "caller: panic", "caller: error", limitCall},
		{"limit.Rate", "inner Ready", "caller", "caller: panic", "caller: error", rateReady},
		{"loadshed", "inner Ready", "caller", "caller: panic", "caller: error", loadshedReady},
		{"timeout Cooperative", "inner Call", "caller", "caller: panic", "caller: error", timeoutCall(timeout.Cooperative)},
		{"timeout Abandon", "inner Call", "abandoned call", "caller: PanicError", "caller: error", timeoutCall(timeout.Abandon)},
		{"timeout Abandon", "inner Call, after the deadline", "abandoned call", "log: PanicError", "", abandonedLate},
		{"buffer", "inner Ready", "caller (queue skipped)", "caller: panic; later callers: PanicError", "caller: error; later callers: error", bufferReadyNow},
		{"buffer", "inner Ready", "caller (in turn)", "caller: panic; later callers: PanicError", "caller: error; later callers: error", bufferReadyInTurn},
		{"buffer", "inner Call", "caller", "caller: panic", "caller: error", bufferCall},
		{"filter", "predicate", "caller", "caller: panic", "caller: error", filterPredicate},
		{"steer", "picker", "caller", "caller: panic", "", steerPicker},
		{"retry", "policy's Retry", "caller", "caller: panic", "", retryPolicy},
		{"hedge", "inner Call", "hedge leg", "caller: PanicError", "caller: error", hedgeCall},
		{"hedge", "policy's CanRetry", "hedge leg", "caller: PanicError", "", hedgeCanRetry},
		{"spawnready", "inner Ready", "drive", "caller: PanicError; later callers: PanicError", "caller: error; later callers: error", spawnDrive},
		{"reconnect", "maker's Ready", "connect", "caller: PanicError; later callers: PanicError", "caller: error; later callers: error", reconnectMakerReady},
		{"reconnect", "maker's Call", "connect", "caller: PanicError; next caller: connected", "caller: error; next caller: connected", reconnectMakerCall},
		{"callall", "inner Call", "worker", "its response: PanicError; others: answered", "its response: error; others: answered", callallCall},
		{"callall", "request iterator", "dispatcher", "the run: PanicError", "", callallIterator},
		{"balance (readycache)", "endpoint's Ready", "driver", "error handler: PanicError; caller: other endpoint", "error handler: error; caller: other endpoint", balanceEndpointReady},
		{"balance", "Discover's Next", "discovery", "error handler: PanicError", "error handler: error", balanceDiscover},
		{"balance", "error handler", "discovery", "log: PanicError", "", balanceHandlerOnDiscovery},
		{"discover.DNS", "newService", "consumer", "report: PanicError", "report: error", dnsNewService},
	}
	return rows
}

// limitReady: the inner service's Ready fails on the caller's goroutine,
// under a ConcurrencyLimit(1): the permit comes back.
func limitReady(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := limit.NewConcurrency(m, 1)
	f.readyFails(h)
	got := catch(call(t.Context(), svc))
	if n := svc.Semaphore().Available(); n != 1 {
		t.Errorf("%d permits free after the fault, want 1", n)
	}
	serves(t, svc, h)
	return "caller: " + got
}

func limitCall(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := limit.NewConcurrency(m, 1)
	o := goCatch(call(t.Context(), svc))
	r, _ := h.Next(t.Context())
	f.callFails(r)
	got, _ := o.Wait()
	if n := svc.Semaphore().Available(); n != 1 {
		t.Errorf("%d permits free after the fault, want 1", n)
	}
	serves(t, svc, h)
	return "caller: " + got
}

func rateReady(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := limit.NewRate(m, 1, time.Second)
	f.readyFails(h)
	got := catch(call(t.Context(), svc))
	// The place went back to the window: a request goes through now.
	serves(t, svc, h)
	return "caller: " + got
}

func loadshedReady(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := loadshed.New(limit.NewConcurrency(m, 1))
	f.readyFails(h)
	got := catch(call(t.Context(), svc))
	h.ExpectOutstanding(t, 0)
	serves(t, svc, h)
	return "caller: " + got
}

// timeoutCall: the inner call fails before the deadline, under a
// Timeout(50ms) over a ConcurrencyLimit(1), in the mode given.
func timeoutCall(mode timeout.Mode) func(t *testing.T, f fault) string {
	return func(t *testing.T, f fault) string {
		m, h := towertest.NewMock[string, string]()
		lim := limit.NewConcurrency(m, 1)
		svc := timeout.New(lim, 50*time.Millisecond, timeout.WithMode(mode))
		o := goCatch(call(t.Context(), svc))
		r, _ := h.Next(t.Context())
		f.callFails(r)
		got, _ := o.Wait()
		synctest.Wait()
		if n := lim.Semaphore().Available(); n != 1 {
			t.Errorf("%d permits free after the fault, want 1", n)
		}
		serves(t, svc, h)
		return "caller: " + got
	}
}

// abandonedLate: in Abandon mode, the inner call panics after the caller
// got ErrElapsed: nobody is left to hear of it but the log.
func abandonedLate(t *testing.T, f fault) string {
	log := towertest.CaptureLog(t)
	release := make(chan struct{})
	deaf := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
		<-release // ignores its context
		return "", f.hit()
	})
	lim := limit.NewConcurrency[string, string](deaf, 1)
	svc := timeout.New[string, string](lim, 50*time.Millisecond, timeout.WithMode(timeout.Abandon))
	if got := catch(call(t.Context(), svc)); got != "another error: request timed out" {
		t.Errorf("the caller got %s, want ErrElapsed", got)
	}
	if n := lim.Semaphore().Available(); n != 0 {
		t.Errorf("%d permits free while the abandoned call runs, want 0", n)
	}
	close(release)
	synctest.Wait()
	if n := lim.Semaphore().Available(); n != 1 {
		t.Errorf("%d permits free after the abandoned call ended, want 1", n)
	}
	if strings.Contains(log.String(), "injected panic") && strings.Contains(log.String(), "stack=") {
		return "log: PanicError"
	}
	return "log: " + log.String()
}

// bufferReadyNow: nothing is queued and the inner service's Ready fails
// when the caller, skipping the queue, asks it: the Buffer is broken for
// good, and its slot is back.
func bufferReadyNow(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	b := buffer.New(m, 1)
	defer b.Close()
	f.readyFails(h)
	got := catch(call(t.Context(), b))
	later := catch(call(t.Context(), b))
	h.ExpectOutstanding(t, 0)
	return "caller: " + got + "; later callers: " + later
}

// bufferReadyInTurn: the request queued, and the inner service's Ready
// fails while the request waits for it in its turn, on its caller's
// goroutine.
func bufferReadyInTurn(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	h.Allow(0)
	b := buffer.New(m, 1)
	defer b.Close()
	o := goCatch(call(t.Context(), b))
	synctest.Wait()
	f.readyFails(h)
	got, _ := o.Wait()
	later := catch(call(t.Context(), b))
	h.ExpectOutstanding(t, 0)
	return "caller: " + got + "; later callers: " + later
}

func bufferCall(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	b := buffer.New[string, string](limit.NewConcurrency(m, 1), 1)
	defer b.Close()
	o := goCatch(call(t.Context(), b))
	r, _ := h.Next(t.Context())
	f.callFails(r)
	got, _ := o.Wait()
	serves(t, b, h)
	return "caller: " + got
}

func filterPredicate(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := filter.New(limit.NewConcurrency(m, 1), func(req string) (string, error) { return req, f.hit() })
	got := catch(call(t.Context(), svc))
	h.ExpectOutstanding(t, 0)
	return "caller: " + got
}

func steerPicker(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := steer.New([]tower.Service[string, string]{limit.NewConcurrency(m, 1)}, func(context.Context, string, int) int {
		f.hit()
		return 0
	})
	got := catch(call(t.Context(), svc))
	h.ExpectOutstanding(t, 0)
	return "caller: " + got
}

// faultyRetry retries every error once, and fails in Retry.
type faultyRetry struct{ f fault }

func (p faultyRetry) Clone(req string) (string, bool) { return req, true }
func (p faultyRetry) Retry(context.Context, *retry.Attempt[string, string]) (time.Duration, bool) {
	p.f.hit()
	return 0, false
}

func retryPolicy(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	svc := retry.New[string, string](limit.NewConcurrency(m, 1), faultyRetry{f})
	o := goCatch(call(t.Context(), svc))
	answerNext(t, h)
	got, _ := o.Wait()
	h.ExpectOutstanding(t, 0)
	return "caller: " + got
}

// hedgePolicy clones every request, and fails in CanRetry if f is set.
type hedgePolicy struct{ f *fault }

func (p hedgePolicy) Clone(req string) (string, bool) { return req, true }
func (p hedgePolicy) CanRetry(string) bool {
	if p.f != nil {
		p.f.hit()
	}
	return true
}

// primedHedge returns a Hedge over a ConcurrencyLimit(2) over a mock whose
// hedges go out 10ms after the original: one call of 10ms has been
// recorded in the period before.
func primedHedge(t *testing.T, policy hedgePolicy) (*hedge.Hedge[string, string], *limit.Concurrency[string, string], *towertest.Handle[string, string]) {
	m, h := towertest.NewMock[string, string]()
	lim := limit.NewConcurrency(m, 2)
	hg := hedge.New(lim, policy, 1, 0.9, 100*time.Millisecond, hedge.WithBudget(nil))
	o := towertest.Go(func() (string, error) { return tower.Call(t.Context(), hg, "prime") })
	r, _ := h.Next(t.Context())
	time.Sleep(10 * time.Millisecond)
	r.Respond("primed")
	o.Wait()
	time.Sleep(100 * time.Millisecond)
	return hg, lim, h
}

// hedgeCall: the hedge leg's call fails first, while the original waits.
func hedgeCall(t *testing.T, f fault) string {
	hg, lim, h := primedHedge(t, hedgePolicy{})
	o := goCatch(call(t.Context(), hg))
	original, _ := h.Next(t.Context())
	hedged, _ := h.Next(t.Context())
	f.callFails(hedged)
	got, _ := o.Wait()
	if original.Context().Err() == nil {
		t.Error("the original's context was not cancelled when the hedge answered")
	}
	synctest.Wait()
	if n := lim.Semaphore().Available(); n != 2 {
		t.Errorf("%d permits free after the fault, want 2", n)
	}
	return "caller: " + got
}

// hedgeCanRetry: the policy's CanRetry panics on the hedge leg, before
// the original answers.
func hedgeCanRetry(t *testing.T, f fault) string {
	armed := fault{}
	hg, lim, h := primedHedge(t, hedgePolicy{f: &armed})
	armed = f
	o := goCatch(call(t.Context(), hg))
	h.Next(t.Context())
	got, _ := o.Wait()
	synctest.Wait()
	if n := lim.Semaphore().Available(); n != 2 {
		t.Errorf("%d permits free after the fault, want 2", n)
	}
	return "caller: " + got
}

func spawnDrive(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	h.Allow(0)
	sr := spawnready.New(m)
	defer sr.Close()
	o := goCatch(call(t.Context(), sr))
	synctest.Wait()
	f.readyFails(h)
	got, _ := o.Wait()
	later := catch(call(t.Context(), sr))
	h.ExpectOutstanding(t, 0)
	return "caller: " + got + "; later callers: " + later
}

// maker makes the mock's service, failing as told in its Ready or Call.
type maker struct {
	svc          tower.Service[string, string]
	ready, calls *fault
}

func (mk *maker) Ready(ctx context.Context) (tower.Permit[string, tower.Service[string, string]], error) {
	if f := mk.ready; f != nil {
		mk.ready = nil
		if err := f.hit(); err != nil {
			return tower.Permit[string, tower.Service[string, string]]{}, err
		}
	}
	return tower.ServiceFunc[string, tower.Service[string, string]](func(context.Context, string) (tower.Service[string, string], error) {
		if f := mk.calls; f != nil {
			mk.calls = nil
			return nil, f.hit()
		}
		return mk.svc, nil
	}).Ready(ctx)
}

func reconnectMakerReady(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	r := reconnect.New[string, string, string](&maker{svc: m, ready: &f}, "target")
	defer r.Close()
	got := catch(call(t.Context(), r))
	later := catch(call(t.Context(), r))
	h.ExpectOutstanding(t, 0)
	return "caller: " + got + "; later callers: " + later
}

func reconnectMakerCall(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	r := reconnect.New[string, string, string](&maker{svc: m, calls: &f}, "target")
	defer r.Close()
	got := catch(call(t.Context(), r))
	serves(t, r, h)
	return "caller: " + got + "; next caller: connected"
}

// callallCall: three requests through callall with a limit of 2; the
// second one's call fails.
func callallCall(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	lim := limit.NewConcurrency(m, 2)
	go func() {
		for i := range 3 {
			r, err := h.Next(t.Context())
			if err != nil {
				return
			}
			if i == 1 {
				f.callFails(r)
			} else {
				r.Respond("world")
			}
		}
	}()
	var got, others []string
	for res, err := range callall.Ordered(t.Context(), lim, slicesOf("a", "b", "c"), 2) {
		if res == "world" && err == nil {
			others = append(others, "answered")
		} else {
			got = append(got, heard(nil, err))
		}
	}
	if len(got) != 1 || len(others) != 2 {
		return fmt.Sprintf("its response: %v; others: %v", got, others)
	}
	h.ExpectOutstanding(t, 0)
	return "its response: " + got[0] + "; others: answered"
}

func slicesOf(reqs ...string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, r := range reqs {
			if !yield(r) {
				return
			}
		}
	}
}

// callallIterator: the caller's sequence of requests panics after the
// first: that request is answered, and the run ends with the PanicError.
func callallIterator(t *testing.T, f fault) string {
	svc := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	reqs := func(yield func(string) bool) {
		if yield("a") {
			f.hit()
		}
	}
	var got []string
	for res, err := range callall.Ordered[string, string](t.Context(), svc, reqs, 1) {
		if err != nil {
			got = append(got, heard(nil, err))
		} else if res != "a" {
			t.Errorf("got response %q, want %q", res, "a")
		}
	}
	return "the run: " + strings.Join(got, ", ")
}

// handlerLog collects what a balancer's error handler hears.
type handlerLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *handlerLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *handlerLog) heard() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var got []string
	for _, err := range l.errs {
		got = append(got, heard(nil, err))
	}
	return strings.Join(got, ", ")
}

// balanceEndpointReady: of two endpoints, one is not ready, and its Ready
// fails on the cache's driver. It is dropped and reported; the caller is
// served by the other.
func balanceEndpointReady(t *testing.T, f fault) string {
	m1, h1 := towertest.NewMock[string, string]()
	m2, h2 := towertest.NewMock[string, string]()
	h1.Allow(0)
	var l handlerLog
	rr := balance.NewRoundRobin(discover.NewList[tower.Service[string, string]](m1, m2), balance.WithErrorHandler(l.add))
	defer rr.Close()
	synctest.Wait()
	f.readyFails(h1)
	synctest.Wait()
	if n := rr.Len(); n != 1 {
		t.Errorf("the balancer has %d endpoints after the fault, want 1", n)
	}
	serves(t, rr, h2)
	h1.ExpectOutstanding(t, 0)
	return "error handler: " + l.heard() + "; caller: other endpoint"
}

// failingDiscover sends one endpoint, then fails once, then has no more.
type failingDiscover struct {
	f    fault
	step int
	svc  tower.Service[string, string]
}

func (d *failingDiscover) Next(ctx context.Context) (discover.Change[int, tower.Service[string, string]], error) {
	d.step++
	switch d.step {
	case 1:
		return discover.Change[int, tower.Service[string, string]]{Kind: discover.Insert, Key: 1, Service: d.svc}, nil
	case 2:
		// Not when the balancer is built: on its discovery goroutine.
		return discover.Change[int, tower.Service[string, string]]{}, ctx.Err()
	case 3:
		return discover.Change[int, tower.Service[string, string]]{}, d.f.hit()
	}
	<-ctx.Done()
	return discover.Change[int, tower.Service[string, string]]{}, ctx.Err()
}

func balanceDiscover(t *testing.T, f fault) string {
	m, h := towertest.NewMock[string, string]()
	var l handlerLog
	rr := balance.NewRoundRobin[int, string, string](&failingDiscover{f: f, svc: m}, balance.WithErrorHandler(l.add))
	defer rr.Close()
	synctest.Wait()
	serves(t, rr, h)
	return "error handler: " + l.heard()
}

// balanceHandlerOnDiscovery: the error handler itself panics, on the
// discovery goroutine, when told of the Discover's error.
func balanceHandlerOnDiscovery(t *testing.T, f fault) string {
	log := towertest.CaptureLog(t)
	m, h := towertest.NewMock[string, string]()
	rr := balance.NewRoundRobin[int, string, string](&failingDiscover{f: fault{}, svc: m}, balance.WithErrorHandler(func(error) { f.hit() }))
	defer rr.Close()
	synctest.Wait()
	serves(t, rr, h)
	if strings.Contains(log.String(), "injected panic") && strings.Contains(log.String(), "stack=") {
		return "log: PanicError"
	}
	return "log: " + log.String()
}

// fakeResolver answers two addresses.
type fakeResolver struct{}

func (fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")}, nil
}

func (fakeResolver) LookupSRV(context.Context, string, string, string) (string, []*net.SRV, error) {
	return "", nil, errors.New("no SRV")
}

// dnsNewService: making the service for one of two addresses fails; Next
// reports it, and the other address is inserted.
func dnsNewService(t *testing.T, f fault) string {
	d := discover.NewDNS(fakeResolver{}, "svc.example", 80, time.Minute, func(addr string) (string, error) {
		if addr == "10.0.0.1:80" {
			return "", f.hit()
		}
		return addr, nil
	})
	var reports []string
	inserted := 0
	for range 2 {
		ch, err := d.Next(t.Context())
		if err != nil {
			reports = append(reports, heard(nil, err))
		} else if ch.Kind == discover.Insert && ch.Key == "10.0.0.2:80" {
			inserted++
		}
	}
	if inserted != 1 {
		t.Errorf("the other address was inserted %d times, want once", inserted)
	}
	return "report: " + strings.Join(reports, ", ")
}
