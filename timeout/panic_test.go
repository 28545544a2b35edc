package timeout_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// abandonedCall is the Where of the PanicError of an abandoned call.
const abandonedCall = "the inner service's Call, on the goroutine of a Timeout's Abandon mode"

// exits ends its goroutine with runtime.Goexit, as t.FailNow does.
func exits() { runtime.Goexit() }

// panicsBoom panics with "boom".
func panicsBoom() { panic("boom") }

// ending is an inner service that takes d, then ends as end does: with a
// panic or a runtime.Goexit.
func ending(d time.Duration, end func()) tower.ServiceFunc[string, string] {
	return func(context.Context, string) (string, error) {
		time.Sleep(d)
		end()
		return "unreachable", nil
	}
}

// ended is how a call ended on the caller's goroutine: it returned, it
// panicked, or the goroutine exited.
type ended struct {
	err      error
	panicked any
	exited   bool
	at       time.Duration
}

// callEnding calls svc on a goroutine of its own and reports how the call
// ended.
func callEnding(ctx context.Context, svc tower.Service[string, string]) ended {
	var (
		e        ended
		returned bool
		wg       sync.WaitGroup
	)
	start := time.Now()
	wg.Go(func() {
		defer func() {
			e.at = time.Since(start)
			e.panicked = recover()
			e.exited = !returned && e.panicked == nil
		}()
		_, e.err = tower.Call(ctx, svc, "hello")
		returned = true
	})
	wg.Wait()
	return e
}

// The inner call panics, or calls runtime.Goexit, at 50ms, within the
// Timeout of 150ms. In Cooperative mode it runs on the caller's goroutine,
// and the panic goes on up to the caller, the exit ends the caller's
// goroutine, as they would without the Timeout. In Abandon mode it runs on
// a goroutine the Timeout started, which must not take the program down:
// the caller, still waiting, gets a *tower.PanicError that says where it
// happened and carries the panic's value and stack. Either way the
// ConcurrencyLimit below has its permit back when the caller hears.
func TestInnerPanicReachesCaller(t *testing.T) {
	tests := []struct {
		name   string
		opts   []timeout.Option
		end    func()
		panic  any    // on the caller's goroutine
		exited bool   // the caller's goroutine
		says   string // the PanicError's message, if the caller gets one
	}{
		{"Cooperative/Panic", nil, panicsBoom, "boom", false, ""},
		{"Cooperative/Goexit", nil, exits, nil, true, ""},
		{"Abandon/Panic", abandon, panicsBoom, nil, false, "boom"},
		{"Abandon/Goexit", abandon, exits, nil, false, "runtime.Goexit was called"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := limit.NewConcurrency(ending(50*ms, tt.end), 1)
				svc := timeout.New(lim, 150*ms, tt.opts...)
				e := callEnding(t.Context(), svc)
				if e.at != 50*ms {
					t.Errorf("the call ended at %v, want 50ms", e.at)
				}
				if e.panicked != tt.panic || e.exited != tt.exited {
					t.Errorf("got panic %v, goroutine exited %t; want %v, %t", e.panicked, e.exited, tt.panic, tt.exited)
				}
				if tt.says != "" {
					checkPanicError(t, e.err, tt.says)
				} else if e.err != nil {
					t.Errorf("got error %v, want none", e.err)
				}
				if n := lim.Semaphore().Available(); n != 1 {
					t.Errorf("got %d permits free when the caller heard, want 1", n)
				}
			})
		})
	}
}

// checkPanicError fails t unless err is a *tower.PanicError of an
// abandoned call that says says, with the stack of the goroutine that
// panicked.
func checkPanicError(t *testing.T, err error, says string) {
	t.Helper()
	var pe *tower.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want a *tower.PanicError", err)
	}
	if want := "tower: panic in " + abandonedCall + ": " + says; pe.Error() != want {
		t.Errorf("got message %q, want %q", pe.Error(), want)
	}
	if !bytes.Contains(pe.Stack, []byte("panic_test.go")) {
		t.Errorf("the stack does not show the inner service:\n%s", pe.Stack)
	}
}

// A panic or runtime.Goexit in a call that Abandon mode has abandoned
// comes when no caller is left to hear of it: the caller got ErrElapsed at
// the deadline, 100ms. It must not take the program down. It is logged,
// with its stack, and the permit the abandoned call held below the Timeout
// comes back when it ends, at 200ms.
func TestLatePanicIsLogged(t *testing.T) {
	tests := []struct {
		name string
		end  func()
		says string
	}{
		{"Panic", panicsBoom, "panic=boom"},
		{"Goexit", exits, "runtime.Goexit was called"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := towertest.CaptureLog(t)
			synctest.Test(t, func(t *testing.T) {
				lim := limit.NewConcurrency(ending(200*ms, tt.end), 1)
				svc := timeout.New(lim, 100*ms, abandon...)
				e := callEnding(t.Context(), svc)
				if e.err != timeout.ErrElapsed || e.at != 100*ms {
					t.Errorf("got %v at %v, want %v at 100ms", e.err, e.at, timeout.ErrElapsed)
				}
				if n := lim.Semaphore().Available(); n != 0 {
					t.Errorf("got %d permits free while the abandoned call runs, want 0", n)
				}
				time.Sleep(100 * ms)
				synctest.Wait()
				if n := lim.Semaphore().Available(); n != 1 {
					t.Errorf("got %d permits free after the abandoned call ended, want 1", n)
				}
			})
			out := log.String()
			for _, want := range []string{"level=ERROR", `where="` + abandonedCall + `"`, tt.says, "panic_test.go"} {
				if !strings.Contains(out, want) {
					t.Errorf("the log lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
