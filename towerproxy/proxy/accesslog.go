package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"
)

// An accessLog writes one JSON line per request (log/slog's JSON
// handler), to standard output, standard error or a file:
//
//	{"time":"2026-11-02T10:00:00.123Z","level":"INFO","msg":"request",
//	 "method":"GET","host":"example.com","path":"/api/items","status":200,
//	 "bytes":512,"duration_ms":3.2,"client":"10.0.0.7","route":"/api",
//	 "upstream":"api","backend":"http://10.0.1.5:9001","attempts":2,
//	 "retried":["status 503"]}
//
// A request that was not served says why: "shed" names the limit that
// shed it (proxy_limit, upstream_limit, rate_limit), "error" why it
// failed (the upstream's error, or the proxy's); "retried" lists the
// cause of each retry. "trace_id" is there when the request is traced.
// The fields of what a request did not reach (route, upstream, backend)
// are left out.
type accessLog struct {
	to   string   // the configuration's access_log
	file *os.File // nil for stdout and stderr
	log  *slog.Logger
}

// openAccessLog opens the access log that to names: "stdout" (or ""),
// "stderr", a file's path (appended to, made if missing), or "off", for
// which it returns nil.
func openAccessLog(to string) (*accessLog, error) {
	var w io.Writer
	a := &accessLog{to: to}
	switch to {
	case "off":
		return nil, nil
	case "", "stdout":
		w = os.Stdout
	case "stderr":
		w = os.Stderr
	default:
		f, err := os.OpenFile(to, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("access_log: %w", err)
		}
		a.file, w = f, f
	}
	a.log = slog.New(slog.NewJSONHandler(w, nil))
	return a, nil
}

// target returns what the configuration named, "off" for a nil log.
func (a *accessLog) target() string {
	if a == nil {
		return "off"
	}
	return a.to
}

// close closes the log's file, if it has one.
func (a *accessLog) close() {
	if a != nil && a.file != nil {
		a.file.Close()
	}
}

// write writes the line of r, served in d, as rec recorded it.
func (a *accessLog) write(rec *record, r *http.Request, d time.Duration) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("method", r.Method),
		slog.String("host", r.Host),
		slog.String("path", r.URL.Path),
		slog.Int("status", rec.status),
		slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("client", clientAddr(r)),
	)
	str := func(key, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(key, v))
		}
	}
	str("route", rec.route)
	str("upstream", rec.upstream)
	str("backend", rec.backend)
	if rec.attempts > 0 {
		attrs = append(attrs, slog.Int("attempts", rec.attempts))
	}
	if len(rec.retried) > 0 {
		attrs = append(attrs, slog.Any("retried", rec.retried))
	}
	str("shed", rec.shed)
	str("error", rec.failure)
	if rec.hijacked {
		attrs = append(attrs, slog.Bool("upgraded", true))
	}
	str("trace_id", traceID(rec))
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
}

// checkAccessLog checks the configuration's access_log: a file's path
// must name a file in a directory that exists (the file is made).
func checkAccessLog(to string) error {
	switch to {
	case "stdout", "stderr", "off":
		return nil
	}
	if strings.HasSuffix(to, "/") {
		return fmt.Errorf("access_log %q is a directory, not a file", to)
	}
	dir := "."
	if i := strings.LastIndexByte(to, '/'); i >= 0 {
		dir = to[:i+1]
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("access_log %q: the directory %s does not exist (or say stdout, stderr or off)", to, dir)
	}
	return nil
}
