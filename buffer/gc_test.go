package buffer

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// These tests watch the garbage collector close Buffers, so they run on the
// real clock, outside synctest: inside a bubble no cleanup is registered
// (internal/lifetime). They read the worker's done channel, which is why
// they are in package buffer.

// gcRounds bounds how many collections a test runs while waiting for a
// cleanup; gcPause is how long it lets the cleanup goroutine run after each.
// Together they are the safety timeout (about 10s); a passing run stops at
// the first round that sees the cleanup.
const (
	gcRounds = 200
	gcPause  = 50 * time.Millisecond
)

// collect runs the garbage collector until done is closed, or fails t once
// the rounds run out.
func collect(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	for range gcRounds {
		runtime.GC()
		select {
		case <-done:
			return
		case <-time.After(gcPause):
		}
	}
	t.Fatalf("%s after %d collections", what, gcRounds)
}

// newUnreachable returns the core of a Buffer that nothing references any
// more. It is a function of its own so that no variable of the caller's
// keeps the Buffer alive.
func newUnreachable(inner tower.Service[string, string]) *core[string, string] {
	return New(inner, 1).c
}

func TestUnreachableBufferIsClosed(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	c := newUnreachable(mock)
	collect(t, c.done, "the worker of an unreachable Buffer still runs")
	// The worker is gone, and so is the way in: the slots are closed.
	if err := c.slots.Acquire(t.Context()); err != ErrClosed {
		t.Errorf("got error %v from the slots of a collected Buffer, want %v", err, ErrClosed)
	}
}

// readyAndDrop returns a permit of a Buffer that nothing else references.
func readyAndDrop(t *testing.T, inner tower.Service[string, string]) (tower.Permit[string, string], *core[string, string]) {
	b := New(inner, 1)
	p, err := b.Ready(t.Context())
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return p, b.c
}

// askedService signals asked the first time the worker waits for it: by
// then the caller's request is in the worker's hand.
type askedService struct {
	tower.Service[string, string]
	asked chan struct{}
	once  sync.Once
}

func (s *askedService) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() == nil {
		s.once.Do(func() { close(s.asked) })
	}
	return s.Service.Ready(ctx)
}

// A permit keeps its Buffer reachable, and so does a call in flight: the
// garbage collector must not close a Buffer under a caller whose request is
// queued. The caller below holds nothing but the permit it is calling, and
// the worker waits for the inner service on its behalf; the request must
// still go through once the inner service is ready.
func TestCallInFlightKeepsBufferAlive(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	h.Allow(0)
	inner := &askedService{Service: mock, asked: make(chan struct{})}
	p, c := readyAndDrop(t, inner)

	var (
		res string
		err error
		wg  sync.WaitGroup
	)
	wg.Go(func() { res, err = p.Call(context.Background(), "hello") })
	defer wg.Wait()
	select {
	case <-inner.asked:
	case <-t.Context().Done():
		t.Fatal("the worker never waited for the inner service")
	}

	// A canary dropped now is collected in the same cycle as the Buffer
	// would be, were it unreachable; once its cleanup has run, give the
	// Buffer's a few more rounds. Had it run, the caller would get
	// ErrClosed.
	canary := make(chan struct{})
	runtime.AddCleanup(new([16]byte), func(ch chan struct{}) { close(ch) }, canary)
	collect(t, canary, "the canary was not collected")
	for range 3 {
		runtime.GC()
		select {
		case <-c.done:
			h.AllowAll()
			wg.Wait()
			t.Fatalf("the Buffer was closed while a call was in flight; the call returned %q, %v", res, err)
		case <-time.After(gcPause):
		}
	}
	h.Allow(1)
	r, rerr := h.Next(t.Context())
	if rerr != nil {
		t.Fatalf("waiting for the request: %v", rerr)
	}
	r.Respond("world")
	wg.Wait()
	if res != "world" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", res, err, "world")
	}
	c.shutdown(context.Background())
}

// After the inner service fails, the worker exits by itself: no Close is
// needed for its goroutine to end.
func TestWorkerExitsAfterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.FailReady(errFoobar)
		b := New(mock, 1)
		p, err := b.Ready(t.Context())
		if err != nil {
			t.Fatalf("Ready: %v", err)
		}
		if _, err := p.Call(t.Context(), "hello"); err == nil {
			t.Fatal("Call succeeded, want the inner service's failure")
		}
		synctest.Wait()
		select {
		case <-b.c.done:
		default:
			t.Fatal("the worker still runs after the inner service failed")
		}
	})
}

type foobarError struct{}

func (foobarError) Error() string { return "foobar" }

var errFoobar error = foobarError{}

// newInBubble makes a Buffer inside a synctest bubble, stops its worker
// there (by Close or by failure), and returns a channel closed once the
// Buffer's core has been collected.
func newInBubble(t *testing.T, stop func(*Buffer[string, string], *towertest.Handle[string, string])) <-chan struct{} {
	ran := make(chan struct{})
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		b := New(mock, 1)
		stop(b, h)
		runtime.AddCleanup(b.c, func(ch chan struct{}) { close(ch) }, ran)
	})
	return ran
}

// A Buffer made and stopped inside a synctest bubble is collected after
// the bubble ended, and nothing then touches the bubble's channels (the
// runtime kills the program if anything does): in a bubble a Buffer
// registers no cleanup, as a cleanup runs outside every bubble.
func TestCollectedAfterBubble(t *testing.T) {
	tests := []struct {
		name string
		stop func(*Buffer[string, string], *towertest.Handle[string, string])
	}{
		{"Closed", func(b *Buffer[string, string], _ *towertest.Handle[string, string]) { b.Close() }},
		{"Failed", func(b *Buffer[string, string], h *towertest.Handle[string, string]) {
			h.FailReady(errFoobar)
			tower.Call(context.Background(), tower.Service[string, string](b), "hello")
			synctest.Wait()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := newInBubble(t, tt.stop)
			collect(t, ran, "the Buffer's core was not collected")
		})
	}
}
