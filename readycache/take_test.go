package readycache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
	"github.com/towergo/tower/towertest"
)

// Take waits until an endpoint is ready, in virtual time.
func TestTakeWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m, h := newMock(0)
		c.Push(3, m)
		start := time.Now()
		go func() {
			time.Sleep(40 * time.Millisecond)
			h.Allow(1)
		}()
		k, p, err := c.Take(t.Context(), pickAt(0))
		if err != nil || k != 3 {
			t.Fatalf("Take: got key %d, %v; want 3, nil", k, err)
		}
		if got := time.Since(start); got != 40*time.Millisecond {
			t.Errorf("Take returned at %v, want 40ms", got)
		}
		p.Release()
	})
}

// Take returns ctx.Err() unchanged when its context ends, and a ready
// endpoint even when its context is already done.
func TestTakeContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m, h := newMock(0)
		c.Push(0, m)
		ctx, cancel := context.WithTimeout(t.Context(), 25*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, _, err := c.Take(ctx, pickAt(0)); err != context.DeadlineExceeded {
			t.Fatalf("Take: got %v, want %v", err, context.DeadlineExceeded)
		}
		if got := time.Since(start); got != 25*time.Millisecond {
			t.Errorf("Take gave up at %v, want 25ms", got)
		}
		h.Allow(1)
		synctest.Wait()
		_, p, err := c.Take(ctx, pickAt(0)) // ctx is done, an endpoint is ready
		if err != nil {
			t.Fatalf("Take with a done context and a ready endpoint: got %v, want the permit", err)
		}
		p.Release()
	})
}

// Close releases the ready endpoints' reservations and ends the waits for
// the pending ones; a permit taken before stays good, and a Push after Close
// does nothing.
func TestCloseReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newCache(t)
		mr, hr := newMock(-1)
		mp, hp := newMock(0)
		c.Push(0, mr)
		c.Push(1, mp)
		taken, _ := c.TakeKey(0)
		hr.ExpectOutstanding(t, 2) // the permit taken, and the one endpoint 0 holds
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		hr.ExpectOutstanding(t, 1) // the permit taken is the caller's
		hp.ExpectOutstanding(t, 0)
		if c.Len() != 0 || !c.Closed() {
			t.Errorf("after Close: got Len() %d, Closed() %t; want 0, true", c.Len(), c.Closed())
		}
		towertest.CallThrough(t, taken, hr, "late", "still served")

		m, h := newMock(-1)
		c.Push(2, m)
		h.ExpectOutstanding(t, 0)
		if c.Len() != 0 {
			t.Errorf("Push after Close: got Len() %d, want 0", c.Len())
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		f.check(t)
	})
}

// Close wakes a Take waiting for an endpoint with ErrClosed, and a Take
// after Close fails the same way.
func TestCloseWakesTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m, _ := newMock(0)
		c.Push(0, m)
		take := towertest.Go(func() (int, error) {
			k, _, err := c.Take(t.Context(), pickAt(0))
			return k, err
		})
		time.Sleep(10 * time.Millisecond)
		c.Close()
		if _, err := take.Wait(); err != readycache.ErrClosed {
			t.Errorf("Take woken by Close: got %v, want %v", err, readycache.ErrClosed)
		}
		if _, _, err := c.Take(t.Context(), pickAt(0)); err != readycache.ErrClosed {
			t.Errorf("Take after Close: got %v, want %v", err, readycache.ErrClosed)
		}
		select {
		case <-c.Changed():
		default:
			t.Error("Changed() after Close: got an open channel, want a closed one")
		}
	})
}

// Changed is closed at the next change, and only then.
func TestChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m, h := newMock(0)
		c.Push(0, m)
		ch := c.Changed()
		synctest.Wait()
		select {
		case <-ch:
			t.Fatal("Changed() closed with nothing changed")
		default:
		}
		h.Allow(1)
		synctest.Wait()
		select {
		case <-ch:
		default:
			t.Fatal("Changed() still open after an endpoint became ready")
		}
	})
}

func TestFailedError(t *testing.T) {
	f := &readycache.Failed[string]{Key: "a", Err: errDoom}
	if f.Error() != "doom" || !errors.Is(f, errDoom) {
		t.Errorf("got %q, Is(doom) %t; want %q, true", f.Error(), errors.Is(f, errDoom), "doom")
	}
}

func TestBadInputPanics(t *testing.T) {
	var nilOpt readycache.Option[int]
	c := readycache.New[int, string, string, *mock]()
	defer c.Close()
	m, _ := towertest.NewMock[string, string]()
	c.Push(0, m)
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewNilOption", func() { readycache.New[int, string, string, *mock](nilOpt) }, "readycache.New: option 0 is nil"},
		{"WithFailureHandlerNil", func() { readycache.WithFailureHandler[int](nil) }, "readycache.WithFailureHandler: nil handler"},
		{"PushNil", func() { c.Push(1, nil) }, "readycache.Cache.Push: nil service"},
		{"PushTypedNil", func() {
			ci := readycache.New[int, string, string, tower.Service[string, string]]()
			defer ci.Close()
			ci.Push(1, (*mock)(nil))
		}, "readycache.Cache.Push: nil service"},
		{"PickerOutOfRange", func() { c.TryTake(pickAt(1)) }, "readycache: Picker returned index 1 for 1 ready endpoints"},
		{"PickerNegative", func() { c.TryTake(pickAt(-1)) }, "readycache: Picker returned index -1 for 1 ready endpoints"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
	if got := c.ReadyLen(); got != 1 {
		t.Errorf("after a bad Picker: got ReadyLen() %d, want 1", got)
	}
}
