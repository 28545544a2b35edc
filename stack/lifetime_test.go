package stack_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towertest"
)

// expectClosed fails t unless svc's Ready fails with buffer.ErrClosed.
func expectClosed(t *testing.T, svc tower.Service[string, string]) {
	t.Helper()
	if _, err := svc.Ready(t.Context()); err != buffer.ErrClosed {
		t.Errorf("Ready: got %v, want %v", err, buffer.ErrClosed)
	}
}

// Close closes the Buffer of every service the Builder wrapped, through
// Service or through Wrap, as an adapter that builds a stack per host
// does.
func TestCloseClosesEveryBufferMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := stack.New[string, string]().Buffer(1).ConcurrencyLimit(1)
		var services []tower.Service[string, string]
		for range 3 {
			mock, _ := towertest.NewMock[string, string]()
			services = append(services, b.Service(mock))
		}
		mock, _ := towertest.NewMock[string, string]()
		var asLayer tower.Layer[string, string] = b
		services = append(services, asLayer.Wrap(mock))
		for _, svc := range services {
			p := towertest.MustReady(t, svc)
			p.Release()
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, svc := range services {
			expectClosed(t, svc)
		}
		if err := b.Close(); err != nil { // again: nothing left to do
			t.Errorf("second Close: %v", err)
		}
	})
}

// Builders extended from one share its Buffer layer: the Close of either
// closes the Buffers made through both. A Builder added with Layer brings
// its Buffers along; a buffer.Layer added with Layer stays its owner's.
func TestCloseReachesSharedAndNestedBuffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, _ := towertest.NewMock[string, string]()
		base := stack.New[string, string]().Buffer(1)
		x, y := base.Timeout(time.Second), base.LoadShed()
		fromX, fromY := x.Service(mock), y.Service(mock)
		x.Close()
		expectClosed(t, fromX)
		expectClosed(t, fromY)

		inner := stack.New[string, string]().Buffer(1)
		outer := stack.New[string, string]().Timeout(time.Second).Layer(inner)
		nested := outer.Service(mock)
		outer.Close()
		expectClosed(t, nested)

		own := buffer.NewLayer[string, string](1)
		defer own.Close()
		notOwned := stack.New[string, string]().Layer(own).Service(mock)
		stack.New[string, string]().Layer(own).Close()
		p := towertest.MustReady(t, notOwned) // still open
		p.Release()
	})
}

// stubborn is a service that is not ready until release is closed, and
// whose Ready, once it waits, ignores its context, as a badly written
// inner service may: what a Buffer's Close must wait for, and Shutdown
// need not.
type stubborn struct {
	tower.Service[string, string]
	release chan struct{}
}

func (s stubborn) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	select {
	case <-s.release:
	default:
		if ctx.Err() != nil {
			return tower.Permit[string, string]{}, ctx.Err() // not ready now
		}
		<-s.release
	}
	return s.Service.Ready(ctx)
}

// Shutdown stops every Buffer at once, even when ctx ends while it waits
// for the first: here the outer Buffer's request waits in a Ready that
// ignores its context, Shutdown gives up at its deadline, and the inner
// Buffer layer refuses requests all the same. Close then waits for the
// stubborn Ready, and nothing is left running.
func TestShutdownStopsEveryBufferWhenCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		release := make(chan struct{})
		inner := stack.New[string, string]().Buffer(1)
		b := stack.New[string, string]().
			Buffer(1).
			Layer(tower.LayerFunc[string, string](func(s tower.Service[string, string]) tower.Service[string, string] {
				return stubborn{s, release}
			})).
			Layer(inner)
		svc := b.Service(mock)
		alsoInner := inner.Service(mock)
		call := towertest.GoRequest(t.Context(), svc, "hello")
		call.ExpectPending(t) // in the stubborn Ready

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := b.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
		}
		if d := time.Since(start); d != 10*time.Millisecond {
			t.Errorf("Shutdown returned after %v, want 10ms", d)
		}
		expectClosed(t, alsoInner)
		expectClosed(t, svc)

		close(release)
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		call.ExpectError(t, buffer.ErrClosed)
		h.ExpectIdle(t, 0)
	})
}

// A closed Buffer is the Builder's no more: a Builder that lives on, as
// one in a long-lived handler does, keeps nothing of the services it
// wrapped once it is closed.
func TestClosedBuffersAreCollected(t *testing.T) {
	b := stack.New[string, string]().Buffer(1)
	collected := make(chan struct{})
	func() {
		svc := b.ServiceFunc(echo)
		if _, err := tower.Call(t.Context(), svc, "hello"); err != nil {
			t.Fatalf("Call: %v", err)
		}
		runtime.AddCleanup(svc.(*buffer.Buffer[string, string]), func(ch chan struct{}) { close(ch) }, collected)
	}()
	b.Close()
	for range 200 {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("a closed Buffer was not collected after 200 collections")
}
