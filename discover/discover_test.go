package discover_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/discover"
)

// doneCtx returns a context that is already done.
func doneCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// show formats what Next returned.
func show[K comparable, S any](ch discover.Change[K, S], err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case ch.Kind == discover.Remove:
		return fmt.Sprintf("Remove %v", ch.Key)
	}
	return fmt.Sprintf("%v %v %v", ch.Kind, ch.Key, ch.Service)
}

// A List inserts its endpoints under their indexes, in order, then ends;
// it never waits, so a done context changes nothing.
func TestList(t *testing.T) {
	l := discover.NewList("a", "b", "c")
	ctx := doneCtx(t)
	var got []string
	for range 5 {
		got = append(got, show(l.Next(ctx)))
	}
	want := "[Insert 0 a Insert 1 b Insert 2 c error: EOF error: EOF]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if _, err := discover.NewList[string]().Next(ctx); err != io.EOF {
		t.Errorf("empty List: got %v, want io.EOF", err)
	}
}

// NewList copies its arguments: changing the slice afterwards changes
// nothing.
func TestListCopies(t *testing.T) {
	s := []string{"a"}
	l := discover.NewList(s...)
	s[0] = "changed"
	if got := show(l.Next(t.Context())); got != "Insert 0 a" {
		t.Errorf("got %s, want Insert 0 a", got)
	}
}

// A Chan returns what is sent, in order; one already there even with a done
// context; it waits otherwise, and ends when the channel is closed.
func TestChan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan discover.Change[string, int], 2)
		d := discover.Chan[string, int](ch)
		ch <- discover.Change[string, int]{Kind: discover.Insert, Key: "a", Service: 1}
		if got := show(d.Next(doneCtx(t))); got != "Insert a 1" {
			t.Errorf("with a change there and a done ctx: got %s, want Insert a 1", got)
		}
		if _, err := d.Next(doneCtx(t)); err != context.Canceled {
			t.Errorf("with nothing there and a done ctx: got %v, want %v", err, context.Canceled)
		}
		start := time.Now()
		go func() {
			time.Sleep(20 * time.Millisecond)
			ch <- discover.Change[string, int]{Kind: discover.Remove, Key: "a"}
			close(ch)
		}()
		if got := show(d.Next(t.Context())); got != "Remove a" {
			t.Errorf("got %s, want Remove a", got)
		}
		if got := time.Since(start); got != 20*time.Millisecond {
			t.Errorf("Next returned at %v, want 20ms", got)
		}
		if _, err := d.Next(t.Context()); err != io.EOF {
			t.Errorf("after close: got %v, want io.EOF", err)
		}
	})
}

// TestKindValues states the values of the Kinds: they start at 1, so that
// a zero Change is neither an Insert nor a Remove.
func TestKindValues(t *testing.T) {
	if discover.Insert != 1 || discover.Remove != 2 {
		t.Errorf("Insert, Remove = %d, %d; want 1, 2", discover.Insert, discover.Remove)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[discover.Kind]string{discover.Insert: "Insert", discover.Remove: "Remove", 0: "Kind(0)", 7: "Kind(7)"} {
		if got := k.String(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
