package guard_test

import (
	"bytes"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

func TestCall(t *testing.T) {
	if perr := guard.Call("nothing", func() {}); perr != nil {
		t.Fatalf("Call of a function that returns: %v, want nil", perr)
	}
	boom := errors.New("boom")
	perr := guard.Call("a test's function", func() { panic(boom) })
	if perr == nil {
		t.Fatal("Call of a function that panics returned nil")
	}
	if perr.Where != "a test's function" || perr.Value != boom {
		t.Errorf("got %q, %v; want the place and the panic value", perr.Where, perr.Value)
	}
	// The stack is the panic's: it shows the function that panicked.
	if !strings.Contains(string(perr.Stack), "guard_test.TestCall.func") {
		t.Errorf("the stack does not show the panicking function:\n%s", perr.Stack)
	}
}

// runtime.Goexit cannot be stopped, but the goroutine's own deferred
// function gets an error that says what happened.
func TestGoexit(t *testing.T) {
	var (
		wg   sync.WaitGroup
		perr *tower.PanicError
	)
	wg.Go(func() {
		returned := false
		defer func() {
			if !returned {
				perr = guard.Recovered("a goroutine's code", recover())
			}
		}()
		guard.Call("code that exits", runtime.Goexit)
		returned = true
	})
	wg.Wait()
	if perr == nil || !strings.Contains(perr.Error(), "runtime.Goexit") {
		t.Errorf("got %v, want a PanicError that says runtime.Goexit was called", perr)
	}
}

func TestOrphan(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	guard.Orphan(guard.Call("an abandoned call", func() { panic("late") }))
	out := buf.String()
	for _, want := range []string{"level=ERROR", `where="an abandoned call"`, "panic=late", "stack="} {
		if !strings.Contains(out, want) {
			t.Errorf("the log line lacks %s:\n%s", want, out)
		}
	}
	buf.Reset()
	guard.Orphan(guard.Call("a call that did not panic", func() {}))
	if buf.Len() != 0 {
		t.Errorf("no panic, but Orphan logged:\n%s", buf.String())
	}
}

func ExampleCall() {
	perr := guard.Call("a user's callback", func() { panic("oops") })
	// A goroutine of the module's hands perr to the caller it concerns.
	_ = error(perr)
	// Output:
}

// Each calls f with every element even when f panics on some, and the
// first panic reaches the caller after all of them.
func TestEach(t *testing.T) {
	var seen []int
	var got any
	func() {
		defer func() { got = recover() }()
		guard.Each([]int{1, 2, 3, 4}, func(v int) {
			seen = append(seen, v)
			if v == 2 {
				panic("two")
			}
		})
	}()
	if !slices.Equal(seen, []int{1, 2, 3, 4}) {
		t.Errorf("f saw %v, want [1 2 3 4]", seen)
	}
	if got != "two" {
		t.Errorf("recovered %v, want the panic of 2", got)
	}
}

func TestUndo(t *testing.T) {
	undone := 0
	guard.Undo(func() {}, func() { undone++ })
	if undone != 0 {
		t.Errorf("f returned: undo ran %d times, want 0", undone)
	}
	boom := errors.New("boom")
	func() {
		defer func() {
			if r := recover(); r != boom {
				t.Errorf("recovered %v, want f's panic", r)
			}
		}()
		guard.Undo(func() { panic(boom) }, func() { undone++ })
	}()
	if undone != 1 {
		t.Errorf("f panicked: undo ran %d times, want 1", undone)
	}
	var wg sync.WaitGroup
	wg.Go(func() { guard.Undo(runtime.Goexit, func() { undone++ }) })
	wg.Wait()
	if undone != 2 {
		t.Errorf("f called runtime.Goexit: undo ran %d times in all, want 2", undone)
	}
}
