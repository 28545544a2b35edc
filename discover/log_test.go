package discover_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/towertest"
)

// wantLog fails t unless rec recorded want.
func wantLog(t *testing.T, rec *towertest.LogRecorder, want ...string) {
	t.Helper()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got log\n%q\nwant\n%q", got, want)
	}
}

// Each report Next returns is logged once, as Next returns it: a failed
// lookup, one with no address, a service that could not be made, and a
// lookup that found more addresses than the cap. Changes and the
// context's errors are not logged.
func TestDNSLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		r := newFake(
			ips("10.0.0.1"),
			fakeAnswer{err: errors.New("server misbehaving")},
			ips(),
			ips("10.0.0.1", "10.0.0.2", "10.0.0.3"),
		)
		m := &maker{fail: map[string]int{"10.0.0.2:80": 1}}
		d := discover.NewDNS(r, "backend", 80, time.Second, m.make,
			discover.WithMaxEndpoints(2), discover.WithLogger(logger))
		ctx, cancel := context.WithTimeout(t.Context(), 3500*time.Millisecond)
		defer cancel()
		steps := nextN(ctx, d, time.Now(), 6)
		if got := steps[len(steps)-1].got; got != "error: context deadline exceeded" {
			t.Fatalf("the last Next returned %q, want the context's error", got)
		}
		wantLog(t, rec,
			"WARN discover: DNS lookup failed; the endpoints stay as they are name=backend err=server misbehaving",
			"WARN discover: DNS lookup failed; the endpoints stay as they are name=backend err=no addresses",
			"WARN discover: DNS lookup found more addresses than the cap; some are left out name=backend found=3 max=2"+
				" err=discover: lookup backend: found 3 addresses, more than the cap of 2: 1 left out",
			"WARN discover: making the service for a new address failed; it is tried again at the next lookup addr=10.0.0.2:80 err=connection refused",
		)
	})
}

// A panic in the function that makes services is logged with its stack;
// a panic in the logger's handler does not stop the discovery: it is
// logged to log/slog's default logger, and Next returns the report.
func TestDNSLogPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		explode := func(string) (string, error) { panic("boom") }
		d := discover.NewDNS(newFake(ips("10.0.0.1")), "b", 80, time.Second, explode, discover.WithLogger(logger))
		if _, err := d.Next(t.Context()); err == nil {
			t.Fatal("Next returned no report of the panic")
		}
		lines := rec.Lines()
		want := "WARN discover: making the service for a new address failed; it is tried again at the next lookup addr=10.0.0.1:80" +
			" err=tower: panic in the function that makes a service, in a DNS Discover's Next: boom stack=goroutine "
		if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("got log %q, want one line that starts %q", lines, want)
		}
	})
	l := towertest.CaptureLog(t)
	synctest.Test(t, func(t *testing.T) {
		r := newFake(fakeAnswer{err: errors.New("server misbehaving")}, ips("10.0.0.1"))
		d := discover.NewDNS(r, "b", 80, time.Second, (&maker{}).make, discover.WithLogger(towertest.PanickingLogger("logger's bug")))
		checkSteps(t, nextN(t.Context(), d, time.Now(), 2), []step{
			{"error: discover: lookup b: server misbehaving", 0},
			{"Insert 10.0.0.1:80 svc(10.0.0.1:80)", time.Second},
		})
	})
	if out := l.String(); !strings.Contains(out, `panic="logger's bug"`) {
		t.Errorf("the default log lacks the logger's panic:\n%s", out)
	}
}

func TestWithLoggerNil(t *testing.T) {
	towertest.Panics(t, "discover.WithLogger: nil logger", func() { discover.WithLogger(nil) })
}
