package towertest

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// A LogRecorder is a slog.Handler that keeps, in order, the records of
// every level its loggers handle, without the time: the way to check,
// line by line, what a middleware given a *slog.Logger logs. It is safe
// for concurrent use. Its zero value is not usable; call
// [NewLogRecorder].
type LogRecorder struct {
	shared *recorded
	attrs  []slog.Attr // from WithAttrs, qualified by the groups then open
	group  string      // the open groups, as a key prefix: "g1.g2."
}

type recorded struct {
	mu    sync.Mutex
	lines []string
}

// NewLogRecorder returns an empty LogRecorder and a logger that records
// to it.
func NewLogRecorder() (*LogRecorder, *slog.Logger) {
	r := &LogRecorder{shared: new(recorded)}
	return r, slog.New(r)
}

// Lines returns what was logged so far, one line per record: its level,
// its message and its attributes as key=value, in that order, separated
// by spaces, as "WARN balance: dropped an endpoint endpoint=a err=boom".
// Values are formatted as slog.Value's String does, unquoted; a key in a
// group is qualified by the group, "g.key".
func (r *LogRecorder) Lines() []string {
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	return slices.Clone(r.shared.lines)
}

// Reset forgets what was logged so far.
func (r *LogRecorder) Reset() {
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	r.shared.lines = nil
}

// Enabled reports true: a LogRecorder records every level.
func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle records rec as one line.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String())
	b.WriteByte(' ')
	b.WriteString(rec.Message)
	for _, a := range r.attrs {
		writeAttr(&b, "", a)
	}
	rec.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, r.group, a)
		return true
	})
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	r.shared.lines = append(r.shared.lines, b.String())
	return nil
}

// WithAttrs returns a handler that records to the same lines, with attrs
// on every record.
func (r *LogRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	h := *r
	h.attrs = slices.Clip(h.attrs)
	for _, a := range attrs {
		h.attrs = append(h.attrs, slog.Attr{Key: r.group + a.Key, Value: a.Value})
	}
	return &h
}

// WithGroup returns a handler that records to the same lines, with the
// keys of later attributes qualified by name.
func (r *LogRecorder) WithGroup(name string) slog.Handler {
	if name == "" {
		return r
	}
	h := *r
	h.group += name + "."
	return &h
}

// writeAttr writes " key=value" for a, with its key after prefix, and the
// attributes of a group one by one, qualified by it; as slog's handlers
// do, it writes nothing for an empty attribute.
func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			writeAttr(b, prefix, ga)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix + a.Key)
	b.WriteByte('=')
	b.WriteString(a.Value.String())
}

// PanickingLogger returns a logger whose handler panics with v at every
// record: to check that a middleware given it holds nothing when the panic
// leaves, and that the panic ends no goroutine of the middleware's own.
func PanickingLogger(v any) *slog.Logger { return slog.New(panickingHandler{v}) }

type panickingHandler struct{ v any }

func (panickingHandler) Enabled(context.Context, slog.Level) bool    { return true }
func (h panickingHandler) Handle(context.Context, slog.Record) error { panic(h.v) }
func (h panickingHandler) WithAttrs([]slog.Attr) slog.Handler        { return h }
func (h panickingHandler) WithGroup(string) slog.Handler             { return h }
