package towertest

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// A Log is what log/slog's default logger wrote while a test ran: where a
// middleware reports a panic that no caller is left to hear of. It is safe
// for concurrent use.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// CaptureLog sends log/slog's default logger, in its text format, to a Log
// until t ends, and returns the Log. The default logger is the whole
// program's: tests that capture it must not run in parallel.
func CaptureLog(t testing.TB) *Log {
	l := new(Log)
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(l, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return l
}

// Write appends p to the log.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what was logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
