package buffer_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// A Buffer starts no goroutine, so one that is never closed leaves nothing
// running: synctest fails a test whose bubble still has goroutines when it
// ends. Here requests queue, one waits in the inner service's Ready, one
// gives up in the queue, and all are done with before the test ends.
func TestNoGoroutineOutlivesTheRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			time.Sleep(10 * time.Millisecond)
			return req, nil
		})
		b := buffer.New[string, string](limit.NewConcurrency[string, string](handler, 1), 4)
		impatient, cancel := context.WithCancel(t.Context())
		var calls []*towertest.Outcome[string]
		for _, req := range []string{"a", "b", "c", "d"} {
			ctx := t.Context()
			if req == "c" {
				ctx = impatient
			}
			calls = append(calls, towertest.Go(func() (string, error) { return tower.Call(ctx, svc(b), req) }))
			synctest.Wait() // in this order
		}
		synctest.Wait()
		cancel()
		for i, o := range calls {
			res, err := o.Wait()
			if want := string(rune('a' + i)); i != 2 && (res != want || err != nil) {
				t.Errorf("call %d: got %q, %v; want %q, nil", i, res, err, want)
			}
		}
		if _, err := calls[2].Wait(); err != context.Canceled {
			t.Errorf("the caller that gave up: got %v, want %v", err, context.Canceled)
		}
		// No Close: nothing of the Buffer's is left to stop.
	})
}

// New starts no goroutine, and an idle Buffer that nothing references is
// collected like any value, closed or not. The Buffer is made and used in
// a synctest bubble, which fails the test if a goroutine is left in it
// when it ends (counting the process's goroutines instead would count
// those of other tests ending meanwhile).
func TestUnclosedBufferIsCollected(t *testing.T) {
	collected := make(chan struct{})
	synctest.Test(t, func(t *testing.T) {
		b := buffer.New[string, string](tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil }), 1)
		if _, err := tower.Call(t.Context(), svc(b), "hello"); err != nil {
			t.Fatalf("Call: %v", err)
		}
		runtime.AddCleanup(b, func(ch chan struct{}) { close(ch) }, collected)
	})
	for range 200 {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("an unreachable Buffer was not collected after 200 collections")
}

// A Layer holds a Buffer it made until that Buffer is closed: one closed
// by its own Close is the Layer's no more, and is collected while the
// Layer lives on.
func TestLayerForgetsClosedBuffer(t *testing.T) {
	l := buffer.NewLayer[string, string](1)
	defer l.Close()
	collected := make(chan struct{})
	func() {
		s := l.Wrap(tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil }))
		b := s.(*buffer.Buffer[string, string])
		if err := b.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		runtime.AddCleanup(b, func(ch chan struct{}) { close(ch) }, collected)
	}()
	for range 200 {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("a closed Buffer its Layer made was not collected after 200 collections")
}
