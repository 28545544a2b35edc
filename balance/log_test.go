package balance_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/towertest"
)

// wantLog fails t unless rec recorded want, once the balancer's
// goroutines have gone as far as they can.
func wantLog(t *testing.T, rec *towertest.LogRecorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got log\n%q\nwant\n%q", got, want)
	}
}

// An endpoint dropped for failing its Ready is logged once, with its key;
// so is each error the Discover reports. The error handler still hears of
// both, after the log. Requests are not logged.
func TestLogDroppedAndDiscoverError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		e := &errs{}
		d := make(scripted)
		bal := balance.NewP2C(d, balance.WithLogger(logger), balance.WithErrorHandler(e.add))
		defer bal.Close()
		a, ha := constMock(-1, 0)
		b, hb := constMock(-1, 0)
		hb.FailReady(errors.New("connection refused"))
		d <- insert(1, a)
		d <- insert(2, b)
		synctest.Wait()
		d <- answer{err: errors.New("lookup timed out")}
		handles := map[string]*handle{"a": ha, "b": hb}
		for range 3 {
			if got := callWhich(t, readySettled(t, bal), "x", handles); got != "a" {
				t.Errorf("request went to %s, want a, the endpoint left", got)
			}
		}
		wantLog(t, rec,
			"WARN balance: dropped an endpoint whose Ready failed endpoint=2 err=connection refused",
			"WARN balance: the Discover reported an error; the endpoints stay as they are err=lookup timed out",
		)
		e.check(t,
			"*readycache.Failed[int]: connection refused",
			"*balance.DiscoverError: load balancer discovery error: lookup timed out",
		)
	})
}

// A panic in the Discover's Next, which stops the discovery, is logged at
// level Error, with the panic's stack.
func TestLogDiscoverNextPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		d := make(scripted)
		bal := balance.NewP2C(panicky(d), balance.WithLogger(logger))
		defer bal.Close()
		d <- answer{err: errPanic}
		synctest.Wait()
		lines := rec.Lines()
		want := "ERROR balance: the Discover's Next panicked; discovery stopped, the endpoints stay as they are" +
			" err=tower: panic in the Discover's Next, on a balancer's discovery goroutine: Next exploded stack=goroutine "
		if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("got log %q, want one line that starts %q", lines, want)
		}
	})
}

// A panic in the logger's handler on the balancer's discovery goroutine
// is logged to log/slog's default logger, as one in the error handler is,
// and the discovery goes on.
func TestLoggerPanicsOnDiscoveryGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := towertest.CaptureLog(t)
		d := make(scripted)
		bal := balance.NewP2C(d, balance.WithLogger(towertest.PanickingLogger("logger's bug")))
		defer bal.Close()
		d <- answer{err: errors.New("lookup timed out")}
		a, ha := constMock(-1, 0)
		d <- insert(1, a)
		if got := callWhich(t, readySettled(t, bal), "x", map[string]*handle{"a": ha}); got != "a" {
			t.Errorf("request went to %s, want a", got)
		}
		if out := l.String(); !strings.Contains(out, "panic=\"logger's bug\"") {
			t.Errorf("the default log lacks the logger's panic:\n%s", out)
		}
	})
}

func TestWithLoggerNil(t *testing.T) {
	towertest.Panics(t, "balance.WithLogger: nil logger", func() { balance.WithLogger(nil) })
}
