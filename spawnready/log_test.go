package spawnready_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// wantLog fails t unless rec recorded want, once the drive has gone as
// far as it can.
func wantLog(t *testing.T, rec *towertest.LogRecorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got log\n%q\nwant\n%q", got, want)
	}
}

const failedLine = "ERROR spawnready: the inner service's Ready failed; every Ready fails from now on err=foobar"

// The inner service's failure is logged once, on a drive or on a
// caller's goroutine; the Readys that fail afterwards are not logged, nor
// is Close.
func TestLogInnerFailure(t *testing.T) {
	for _, onDrive := range []bool{false, true} {
		name := "OnCaller"
		if onDrive {
			name = "OnDrive"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec, logger := towertest.NewLogRecorder()
				mock, h := towertest.NewMock[string, string]()
				s := spawnready.New[string, string](mock, spawnready.WithLogger(logger))
				defer s.Close()
				if onDrive {
					h.Allow(0)
					rd := towertest.GoReady(t.Context(), s)
					time.Sleep(30 * time.Millisecond)
					h.FailReady(errFoobar)
					rd.ExpectError(t, errFoobar)
				} else {
					h.FailReady(errFoobar)
					if _, err := s.Ready(t.Context()); err != errFoobar {
						t.Fatalf("Ready: got %v, want %v", err, errFoobar)
					}
				}
				for range 2 {
					if _, _, err := tower.ReadyNow(s); err != errFoobar {
						t.Errorf("ReadyNow after the failure: got %v, want %v", err, errFoobar)
					}
				}
				s.Close()
				wantLog(t, rec, failedLine)
			})
		})
	}
}

// A panic in the logger as it logs the inner service's failure on the
// caller's goroutine goes on up to that caller, once the SpawnReady has
// failed for good: every later Ready gets the failure, and no drive is
// left running (the bubble checks it).
func TestLoggerPanicsOnCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		s := spawnready.New[string, string](mock, spawnready.WithLogger(towertest.PanickingLogger("logger's bug")))
		defer s.Close()
		h.FailReady(errFoobar)
		towertest.Panics(t, "logger's bug", func() { s.Ready(t.Context()) })
		if _, err := s.Ready(t.Context()); err != errFoobar {
			t.Errorf("Ready after the panic: got %v, want %v", err, errFoobar)
		}
		h.ExpectIdle(t, 0)
	})
}

// Close is not a failure: a drive that Close stops, whose inner Ready
// returns the error of its ended context, logs nothing.
func TestLogNotOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		mock, h := towertest.NewMock[string, string]()
		s := spawnready.New[string, string](mock, spawnready.WithLogger(logger))
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		s.Close()
		rd.ExpectError(t, spawnready.ErrClosed)
		wantLog(t, rec)
	})
}

// A panic in the inner service's Ready on a drive is logged with its
// stack; a panic in the logger's handler on a drive is logged to
// log/slog's default logger, and the callers still get the failure.
func TestLogPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		mock, h := towertest.NewMock[string, string]()
		s := spawnready.New[string, string](mock, spawnready.WithLogger(logger))
		defer s.Close()
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		h.PanicReady("boom")
		if _, err := rd.Wait(); err == nil {
			t.Fatal("Ready: got no error, want the PanicError")
		}
		synctest.Wait()
		lines := rec.Lines()
		want := "ERROR spawnready: the inner service's Ready failed; every Ready fails from now on" +
			" err=tower: panic in the inner service's Ready, on a SpawnReady's drive: boom stack=goroutine "
		if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("got log %q, want one line that starts %q", lines, want)
		}
	})
	l := towertest.CaptureLog(t)
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		layer := spawnready.NewLayer[string, string](spawnready.WithLogger(towertest.PanickingLogger("logger's bug")))
		defer layer.Close()
		s := layer.Wrap(mock)
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		h.FailReady(errFoobar)
		rd.ExpectError(t, errFoobar)
		synctest.Wait()
	})
	if out := l.String(); !strings.Contains(out, `panic="logger's bug"`) {
		t.Errorf("the default log lacks the logger's panic:\n%s", out)
	}
}

func TestLoggerOptions(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	towertest.Panics(t, "spawnready.WithLogger: nil logger", func() { spawnready.WithLogger(nil) })
	towertest.Panics(t, "spawnready.New: option 0 is nil", func() { spawnready.New[string, string](mock, nil) })
	towertest.Panics(t, "spawnready.NewLayer: option 0 is nil", func() { spawnready.NewLayer[string, string](nil) })
}
