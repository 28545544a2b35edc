package buffer_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// wantLog fails t unless rec recorded want.
func wantLog(t *testing.T, rec *towertest.LogRecorder, want ...string) {
	t.Helper()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got log\n%q\nwant\n%q", got, want)
	}
}

const failedLine = "ERROR buffer: the inner service failed; the Buffer fails every request from now on err=foobar"

// The inner service's failure is logged once, when the Buffer stops with
// it, whether the request whose turn it was saw it or one that skipped
// the queue did; the requests that fail afterwards are not logged.
func TestLogInnerFailure(t *testing.T) {
	for _, queued := range []bool{false, true} {
		name := "Skipped"
		if queued {
			name = "Queued"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec, logger := towertest.NewLogRecorder()
				m, h := towertest.NewMock[string, string]()
				b := buffer.New[string, string](m, 4, buffer.WithLogger(logger))
				defer b.Close()
				if queued {
					h.Allow(0)
				} else {
					h.FailReady(errFoobar)
				}
				call1 := towertest.GoRequest(t.Context(), b, "1")
				call2 := towertest.GoRequest(t.Context(), b, "2")
				if queued {
					wantLog(t, rec) // nothing has failed yet
					h.FailReady(errFoobar)
				}
				synctest.Wait()
				for _, call := range []*towertest.Outcome[string]{call1, call2} {
					_, err := call.Wait()
					wantServiceError(t, err)
				}
				if _, err := tower.Call(t.Context(), svc(b), "3"); err == nil {
					t.Error("a request after the failure succeeded")
				}
				wantLog(t, rec, failedLine)
			})
		})
	}
}

// A panic in the inner service's Ready is logged as its failure, with the
// panic's stack.
func TestLogPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](m, 1, buffer.WithLogger(logger))
		defer b.Close()
		h.PanicReady("boom")
		if _, p, _ := callRecovering(t.Context(), b, "1"); p != "boom" {
			t.Errorf("the caller's goroutine panicked with %v, want boom", p)
		}
		lines := rec.Lines()
		want := "ERROR buffer: the inner service failed; the Buffer fails every request from now on err=tower: panic in " +
			buffer.ReadyNowOnCaller + ": boom stack=goroutine "
		if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("got log %q, want one line that starts %q", lines, want)
		}
	})
}

// Close is not a failure: closing a Buffer whose request waits in the
// inner service's Ready, which then returns the error of the context Close
// ended, logs nothing.
func TestLogNotOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](m, 1, buffer.WithLogger(logger))
		h.Allow(0)
		call := towertest.GoRequest(t.Context(), b, "queued")
		b.Close()
		call.ExpectError(t, buffer.ErrClosed)
		wantLog(t, rec)
	})
}

// A panic in the logger's handler goes on up to the caller that saw the
// failure, once the Buffer has stopped and the caller's slot is back.
func TestLoggerPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](m, 1, buffer.WithLogger(towertest.PanickingLogger("logger's bug")))
		defer b.Close()
		h.PanicReady("boom")
		if _, p, _ := callRecovering(t.Context(), b, "1"); p != "logger's bug" {
			t.Errorf("the caller's goroutine panicked with %v, want the logger's", p)
		}
		if n := buffer.SlotsFree(b); n != 1 {
			t.Errorf("%d of 1 slots free, want 1", n)
		}
		_, err := b.Ready(t.Context())
		wantPanicError(t, err, buffer.ReadyNowOnCaller)
	})
}

func TestWithLoggerNil(t *testing.T) {
	towertest.Panics(t, "buffer.WithLogger: nil logger", func() { buffer.WithLogger(nil) })
}
