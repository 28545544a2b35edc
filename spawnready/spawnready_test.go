package spawnready_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

type (
	permit = tower.Permit[string, string]
	handle = towertest.Handle[string, string]
)

var errFoobar = errors.New("foobar")

// newSpawnReady returns a SpawnReady over a mock, closed when the test
// ends, and the mock's handle.
func newSpawnReady(t *testing.T) (*spawnready.SpawnReady[string, string], *handle) {
	mock, h := towertest.NewMock[string, string]()
	s := spawnready.New[string, string](mock)
	t.Cleanup(func() { s.Close() })
	return s, h
}

// tower: when_inner_is_not_ready. The inner service is not ready: "ready
// now?" says no, and starts a drive. Once the inner service is ready, the
// drive holds its permit (one reservation outstanding, and no request),
// and the next "ready now?" takes it.
func TestWhenInnerIsNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		if _, ok, err := tower.ReadyNow(s); ok || err != nil {
			t.Fatalf("ReadyNow: got %v, %v; want not ready", ok, err)
		}
		h.ExpectOutstanding(t, 0)
		h.Allow(1)
		time.Sleep(100 * time.Millisecond)
		h.ExpectOutstanding(t, 1)
		p, ok, err := tower.ReadyNow(s)
		if !ok || err != nil {
			t.Fatalf("ReadyNow: got %v, %v; want the permit the drive held", ok, err)
		}
		towertest.CallThrough(t, p, h, "hello", "world")
		h.ExpectOutstanding(t, 0)
	})
}

// A caller waiting in Ready gets the drive's permit the moment the inner
// service becomes ready.
func TestWaiterGetsDrivePermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		time.Sleep(100 * time.Millisecond)
		h.Allow(1)
		rd.ExpectElapsed(t, 100*time.Millisecond)
		towertest.CallThrough(t, rd.Value(t), h, "hello", "world")
	})
}

// The drive outlives the caller that started it: the caller's ctx ends at
// 50ms and Ready returns its error then; the inner service is ready at
// 80ms, and a caller at 100ms gets the permit without waiting.
func TestDriveOutlivesCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		a := towertest.GoReady(ctx, s)
		time.Sleep(80 * time.Millisecond)
		if !a.Done() {
			t.Fatalf("first caller: still waiting at 80ms, want %v at 50ms", context.DeadlineExceeded)
		}
		if _, err := a.Wait(); err != context.DeadlineExceeded || a.Elapsed() != 50*time.Millisecond {
			t.Fatalf("first caller: got %v at %v, want %v at 50ms", err, a.Elapsed(), context.DeadlineExceeded)
		}
		h.Allow(1)
		time.Sleep(20 * time.Millisecond)
		rd := towertest.GoReady(t.Context(), s)
		rd.ExpectElapsed(t, 0) // at 100ms: the drive's permit is there
		towertest.CallThrough(t, rd.Value(t), h, "hello", "world")
	})
}

// Several callers wait for one drive: the first gets its permit, and the
// others, woken when the drive ends, take the capacity that is free then.
func TestCallersShareDrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		var rds []*towertest.Outcome[permit]
		for range 3 {
			rds = append(rds, towertest.GoReady(t.Context(), s))
		}
		time.Sleep(100 * time.Millisecond)
		h.Allow(3)
		for i, rd := range rds {
			rd.ExpectElapsed(t, 100*time.Millisecond)
			towertest.CallThrough(t, rd.Value(t), h, fmt.Sprint("req ", i), "ok")
		}
		h.ExpectOutstanding(t, 0)
	})
}

// tower: when_inner_fails. The inner service fails its readiness check:
// Ready returns its error, and keeps returning it, without asking the
// inner service again.
func TestWhenInnerFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		h.FailReady(errFoobar)
		if _, err := s.Ready(t.Context()); err == nil || err.Error() != "foobar" {
			t.Fatalf("Ready: got %v, want %q", err, "foobar")
		}
		h.AllowAll()
		if _, err := s.Ready(t.Context()); err != errFoobar {
			t.Errorf("Ready after the failure: got %v, want %v", err, errFoobar)
		}
		h.ExpectOutstanding(t, 0)
	})
}

// The inner service fails while a drive waits for it: the caller waiting
// gets the error, and so does every later Ready.
func TestInnerFailsDuringDrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		time.Sleep(30 * time.Millisecond)
		h.FailReady(errFoobar)
		_, err := rd.Wait()
		if err != errFoobar || rd.Elapsed() != 30*time.Millisecond {
			t.Errorf("waiting caller: got %v at %v, want %v at 30ms", err, rd.Elapsed(), errFoobar)
		}
		if _, _, err := tower.ReadyNow(s); err != errFoobar {
			t.Errorf("ReadyNow after the failure: got %v, want %v", err, errFoobar)
		}
	})
}

// tower: abort_on_drop, which drops the SpawnReady while a task waits for
// it and checks that the spawned task was aborted. Here Close stops the
// drive: the waiting caller gets ErrClosed, the drive's wait in the inner
// service is cancelled, and synctest fails the test if its goroutine is
// left behind.
func TestCloseStopsDrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		inner := &recorder{Service: mock}
		s := spawnready.New[string, string](inner)
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		if err := s.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		_, err := rd.Wait()
		if err != spawnready.ErrClosed {
			t.Errorf("waiting caller: got %v, want %v", err, spawnready.ErrClosed)
		}
		if err := inner.driveCtx().Err(); err != context.Canceled {
			t.Errorf("the drive's ctx: got %v after Close, want %v", err, context.Canceled)
		}
		if _, _, err := tower.ReadyNow(s); err != spawnready.ErrClosed {
			t.Errorf("ReadyNow after Close: got %v, want %v", err, spawnready.ErrClosed)
		}
		s.Close() // idempotent
	})
}

// selfCloser is a service that is never ready, and closes s when asked.
type selfCloser struct {
	s       *spawnready.SpawnReady[string, string]
	readies int
}

func (c *selfCloser) Ready(ctx context.Context) (permit, error) {
	c.readies++
	c.s.Close()
	return permit{}, ctx.Err() // not ready now: Ready is asked with a done ctx
}

// A Close that comes while Ready asks the inner service, before a drive
// starts, ends that Ready with ErrClosed, and starts no drive. (The inner
// service closes the SpawnReady from its own Ready, to put the Close in
// that gap every time.)
func TestCloseBeforeDriveStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &selfCloser{}
		s := spawnready.New[string, string](inner)
		inner.s = s
		if _, err := s.Ready(t.Context()); err != spawnready.ErrClosed {
			t.Fatalf("Ready: got %v, want %v", err, spawnready.ErrClosed)
		}
		if inner.readies != 1 {
			t.Errorf("the inner service was asked %d times, want once (no drive)", inner.readies)
		}
	})
}

// Close releases the permit a drive holds for the next caller.
func TestCloseReleasesHeldPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		tower.ReadyNow(s)
		h.Allow(1)
		h.ExpectOutstanding(t, 1)
		s.Close()
		h.ExpectOutstanding(t, 0)
		if n := h.Calls(); n != 0 {
			t.Errorf("inner service got %d calls, want 0", n)
		}
	})
}

// tower: propagates_trace_spans. The drive waits with the values of the
// ctx of the caller that started it (a trace, a span), but not with its
// cancellation.
func TestDriveCarriesValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		inner := &recorder{Service: mock}
		s := spawnready.New[string, string](inner)
		defer s.Close()
		h.Allow(0)
		type key struct{}
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "span-1"))
		rd := towertest.GoReady(ctx, s)
		cancel()
		rd.Wait()
		synctest.Wait()
		dctx := inner.driveCtx()
		if got := dctx.Value(key{}); got != "span-1" {
			t.Errorf("the drive's ctx has value %v, want %q", got, "span-1")
		}
		if err := dctx.Err(); err != nil {
			t.Errorf("the drive's ctx ended with %v when its caller left, want it to go on", err)
		}
	})
}

// A service that is ready now is used directly: no drive, no goroutine.
func TestReadyInnerIsUsedDirectly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		inner := &recorder{Service: mock}
		s := spawnready.New[string, string](inner)
		defer s.Close()
		p, ok, err := tower.ReadyNow(s)
		if !ok || err != nil {
			t.Fatalf("ReadyNow: got %v, %v; want ready", ok, err)
		}
		towertest.CallThrough(t, p, h, "hello", "world")
		if inner.driveCtx() != nil {
			t.Error("a drive asked the inner service, want only the direct question")
		}
	})
}

// Layer.Close stops the drives of every SpawnReady the layer made.
func TestLayerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := spawnready.NewLayer[string, string]()
		var hs []*handle
		for range 2 {
			mock, h := towertest.NewMock[string, string]()
			h.Allow(0)
			tower.ReadyNow(l.Wrap(mock))
			h.Allow(1)
			hs = append(hs, h)
		}
		for _, h := range hs {
			h.ExpectOutstanding(t, 1)
		}
		// What the layer made stays for its Close, even once nothing
		// else references it.
		runtime.GC()
		l.Close()
		for _, h := range hs {
			h.ExpectOutstanding(t, 0)
		}
	})
}

// recorder remembers the ctx of the last Ready that could wait: the
// drive's.
type recorder struct {
	tower.Service[string, string]
	mu  sync.Mutex
	ctx context.Context
}

func (r *recorder) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() == nil {
		r.mu.Lock()
		r.ctx = ctx
		r.mu.Unlock()
	}
	return r.Service.Ready(ctx)
}

func (r *recorder) driveCtx() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctx
}

// quiet is ready now whenever free is set, but a Ready that waits is ended
// only by its ctx: capacity that frees without waking the waiters, as a
// service that polls for it would.
type quiet struct{ free atomic.Bool }

func (q *quiet) Ready(ctx context.Context) (permit, error) {
	if q.free.Load() {
		return q.readyFree(ctx)
	}
	<-ctx.Done()
	return permit{}, ctx.Err()
}

// readyFree returns the permit of a service that answers each request with
// itself.
func (*quiet) readyFree(ctx context.Context) (permit, error) {
	return tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return req, nil
	}).Ready(ctx)
}

// "Ready now?" while a drive waits asks the inner service again: capacity
// free now goes even to a done ctx, drive or no drive.
func TestReadyNowWhileDriveWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := new(quiet)
		s := spawnready.New[string, string](q)
		defer s.Close()
		if _, ok, err := tower.ReadyNow(s); ok || err != nil {
			t.Fatalf("ReadyNow before the inner service is ready: got %t, %v; want false, nil", ok, err)
		}
		synctest.Wait()
		q.free.Store(true) // the drive, waiting, is not told
		p, ok, err := tower.ReadyNow(s)
		if !ok || err != nil {
			t.Fatalf("ReadyNow once the inner service is ready: got %t, %v; want a permit", ok, err)
		}
		if res, err := p.Call(t.Context(), "hello"); res != "hello" || err != nil {
			t.Errorf("Call: got %q, %v; want %q, nil", res, err, "hello")
		}
	})
}

// slow is ready now whenever free is set; a Ready that waits returns only
// once gate is closed, however early its ctx ends.
type slow struct {
	free atomic.Bool
	gate chan struct{}
}

func (l *slow) Ready(ctx context.Context) (permit, error) {
	if l.free.Load() {
		return (&quiet{}).readyFree(ctx)
	}
	if ctx.Err() == nil {
		<-l.gate
	}
	return permit{}, ctx.Err()
}

// Once Close has been called, "ready now?" answers ErrClosed, even while
// the drive Close stopped has not yet exited and the inner service is
// ready now.
func TestReadyNowAfterCloseWhileDriveExits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &slow{gate: make(chan struct{})}
		s := spawnready.New[string, string](l)
		if _, ok, err := tower.ReadyNow(s); ok || err != nil {
			t.Fatalf("ReadyNow before the inner service is ready: got %t, %v; want false, nil", ok, err)
		}
		synctest.Wait() // the drive waits for gate
		closed := towertest.Go(func() (struct{}, error) { return struct{}{}, s.Close() })
		synctest.Wait() // Close waits for the drive, which waits for gate
		l.free.Store(true)
		if p, ok, err := tower.ReadyNow(s); ok || err != spawnready.ErrClosed {
			p.Release()
			t.Errorf("ReadyNow after Close: got %t, %v; want false, %v", ok, err, spawnready.ErrClosed)
		}
		close(l.gate)
		closed.Wait()
	})
}
