package reconnect_test

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// wantLog fails t unless rec recorded want, once the connect goroutine
// has gone as far as it can.
func wantLog(t *testing.T, rec *towertest.LogRecorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got log\n%q\nwant\n%q", got, want)
	}
}

// newLogged returns a Reconnect over a mock maker that logs to rec's
// logger, and the maker's handle.
func newLogged(t *testing.T, logger *slog.Logger) (*recon, *makerHandle) {
	maker, mh := towertest.NewMock[string, svc]()
	r := reconnect.New[string, string, string](maker, target, reconnect.WithLogger(logger))
	t.Cleanup(func() { r.Close() })
	return r, mh
}

// Each failed connect is logged once, with its number among the connects
// that failed in a row, however many callers waited for it; a connect
// that succeeds starts the count again, and is not logged. A service that
// fails its readiness is logged as it is dropped, with the error its
// Close returned.
func TestLogConnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		r, mh := newLogged(t, logger)
		for range 2 {
			rd1 := towertest.GoReady(t.Context(), r)
			rd2 := towertest.GoReady(t.Context(), r)
			refuse(t, mh, errRefused)
			mustConnectError(t, rd1.Value(t), errRefused)
			mustConnectError(t, rd2.Value(t), errRefused)
		}
		m, h := towertest.NewMock[string, string]()
		inner := closeFails{m}
		rd := towertest.GoReady(t.Context(), r)
		connect(t, mh, inner)
		towertest.CallThrough(t, rd.Value(t), h, "hello", "world")
		wantLog(t, rec,
			"WARN reconnect: connect failed; the next Ready connects again target=db-1 attempt=1 err=connection refused",
			"WARN reconnect: connect failed; the next Ready connects again target=db-1 attempt=2 err=connection refused",
		)

		rec.Reset()
		h.FailReady(errBroken)
		rd = towertest.GoReady(t.Context(), r)
		refuse(t, mh, errRefused)
		mustConnectError(t, rd.Value(t), errRefused)
		wantLog(t, rec,
			"WARN reconnect: the service failed its readiness; dropped it to connect again target=db-1 close_err=close failed err=connection reset",
			"WARN reconnect: connect failed; the next Ready connects again target=db-1 attempt=1 err=connection refused",
		)
	})
}

// closeFails is a mock service whose Close fails.
type closeFails struct {
	*towertest.Mock[string, string]
}

func (closeFails) Close() error { return errors.New("close failed") }

// The maker's own Ready failing breaks the Reconnect for good: that is
// logged at level Error. A connect cut short by Close is not logged.
func TestLogMakerBroken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		r, mh := newLogged(t, logger)
		mh.FailReady(errors.New("maker closed"))
		if _, err := r.Ready(t.Context()); err == nil || err.Error() != "maker closed" {
			t.Fatalf("Ready: got %v, want the maker's error", err)
		}
		wantLog(t, rec, "ERROR reconnect: the maker's Ready failed; the Reconnect is broken for good target=db-1 err=maker closed")

		rec.Reset()
		r2, mh2 := newLogged(t, logger)
		rd := towertest.GoReady(t.Context(), r2)
		checkConnects(t, mh2, 1)
		r2.Close()
		rd.ExpectError(t, reconnect.ErrClosed)
		wantLog(t, rec)
	})
}

// A panic in the maker's Call is a failed connect, logged with the
// panic's stack; a panic in the logger's handler on the connect goroutine
// is logged to log/slog's default logger, and the callers still hear of
// the connect.
func TestLogPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		r, mh := newLogged(t, logger)
		rd := towertest.GoReady(t.Context(), r)
		mh.ExpectSettled(t, target).Panic("boom")
		p := rd.Value(t)
		if _, err := p.Call(t.Context(), "hello"); err == nil {
			t.Fatal("Call: got no error, want the ConnectError of the panic")
		}
		synctest.Wait()
		lines := rec.Lines()
		want := "WARN reconnect: connect failed; the next Ready connects again target=db-1 attempt=1" +
			" err=tower: panic in the maker's Call, on a Reconnect's connect goroutine: boom stack=goroutine "
		if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("got log %q, want one line that starts %q", lines, want)
		}
	})
	l := towertest.CaptureLog(t)
	synctest.Test(t, func(t *testing.T) {
		r, mh := newLogged(t, towertest.PanickingLogger("logger's bug"))
		rd := towertest.GoReady(t.Context(), r)
		refuse(t, mh, errRefused)
		mustConnectError(t, rd.Value(t), errRefused)
		synctest.Wait()
	})
	if out := l.String(); !strings.Contains(out, `panic="logger's bug"`) {
		t.Errorf("the default log lacks the logger's panic:\n%s", out)
	}
}

// A panic in the logger as it logs a dropped service, on the caller's
// goroutine, goes on up to that caller once the service is dropped and
// closed, holding nothing of it; the next Ready connects again and is
// served.
func TestLoggerPanicsOnDrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		maker, mh := towertest.NewMock[string, svc]()
		old, oh := newClosable()
		r := reconnect.NewConnected[string, string, string](maker, target, old, reconnect.WithLogger(towertest.PanickingLogger("logger's bug")))
		t.Cleanup(func() { r.Close() })
		oh.FailReady(errBroken)
		towertest.Panics(t, "logger's bug", func() { r.Ready(t.Context()) })
		if !old.isClosed() {
			t.Error("the dropped service was not closed")
		}
		oh.ExpectIdle(t, 0)
		m, h := towertest.NewMock[string, string]()
		rd := towertest.GoReady(t.Context(), r)
		connect(t, mh, m)
		towertest.CallThrough(t, rd.Value(t), h, "hello", "world")
	})
}

func TestLoggerOptions(t *testing.T) {
	maker, _ := towertest.NewMock[string, svc]()
	inner, _ := towertest.NewMock[string, string]()
	towertest.Panics(t, "reconnect.WithLogger: nil logger", func() { reconnect.WithLogger(nil) })
	towertest.Panics(t, "reconnect.New: option 0 is nil", func() {
		reconnect.New[string, string, string](maker, target, nil)
	})
	towertest.Panics(t, "reconnect.NewConnected: option 0 is nil", func() {
		reconnect.NewConnected[string, string, string](maker, target, inner, nil)
	})
}
