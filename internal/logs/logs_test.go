package logs_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/logs"
	"github.com/towergo/tower/towertest"
)

// One line per failure, with the error as "err" after the attributes.
func ExampleFailure() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	logs.Failure(logger, slog.LevelWarn, "connect failed", errors.New("connection refused"), slog.String("target", "db-1"))
	logs.Failure(nil, slog.LevelWarn, "no logger, no line", errors.New("dropped"))
	// Output:
	// level=WARN msg="connect failed" target=db-1 err="connection refused"
}

// A panic's stack goes with it, as "stack"; a level the logger does not
// log costs nothing more.
func TestFailure(t *testing.T) {
	rec, logger := towertest.NewLogRecorder()
	perr := &tower.PanicError{Where: "a test", Value: "boom", Stack: []byte("goroutine 1 [running]")}
	logs.Failure(logger, slog.LevelError, "broken", fmt.Errorf("wrapped: %w", perr))
	want := "ERROR broken err=wrapped: tower: panic in a test: boom stack=goroutine 1 [running]"
	if got := rec.Lines(); len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want [%q]", got, want)
	}
	quiet := slog.New(slog.NewTextHandler(panicWriter{}, &slog.HandlerOptions{Level: slog.LevelError}))
	logs.Failure(quiet, slog.LevelWarn, "below the level", errors.New("dropped"))
}

// SafeFailure recovers a panic in the handler and logs it to the default
// logger; Failure lets it go on.
func TestSafeFailure(t *testing.T) {
	l := towertest.CaptureLog(t)
	bad := slog.New(slog.NewTextHandler(panicWriter{}, nil))
	logs.SafeFailure(bad, slog.LevelWarn, "m", errors.New("e"))
	logs.SafeFailure(nil, slog.LevelWarn, "m", errors.New("e"))
	if out := l.String(); !strings.Contains(out, "panic=\"writer's bug\"") ||
		!strings.Contains(out, `where="the handler of the *slog.Logger given with WithLogger"`) {
		t.Errorf("the default log lacks the handler's panic:\n%s", out)
	}
	towertest.Panics(t, "writer's bug", func() { logs.Failure(bad, slog.LevelWarn, "m", errors.New("e")) })
}

// panicWriter panics when written to.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("writer's bug") }
