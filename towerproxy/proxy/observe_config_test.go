package proxy_test

import (
	"path/filepath"
	"testing"

	"github.com/towergo/tower/towerproxy/proxy"
)

// The access log and tracing sections are checked as the rest of the
// file is: a mistake names the line.
func TestParseObservabilityErrors(t *testing.T) {
	const tail = "routes: [{upstream: a}]\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n"
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"access log in no directory", "access_log: /no/such/dir/access.log\n" + tail,
			`proxy.yaml:1: access_log "/no/such/dir/access.log": the directory /no/such/dir/ does not exist (or say stdout, stderr or off)`},
		{"access log a directory", "access_log: /tmp/\n" + tail,
			`proxy.yaml:1: access_log "/tmp/" is a directory, not a file`},
		{"unknown exporter", "tracing:\n  exporter: jaeger\n" + tail,
			`proxy.yaml:2: tracing.exporter "jaeger" is neither otlp nor stdout`},
		{"bad endpoint", "tracing:\n  endpoint: collector:4318\n" + tail,
			`proxy.yaml:2: tracing.endpoint "collector:4318" is not a URL (write it as http://collector:4318/v1/traces)`},
		{"endpoint without otlp", "tracing:\n  exporter: stdout\n  endpoint: http://c:4318\n" + tail,
			`proxy.yaml:3: tracing.endpoint is for the otlp exporter, not stdout`},
		{"bad sample", "tracing:\n  sample: 0.5\n" + tail,
			`proxy.yaml:2: "0.5" is not a percentage between 0% and 100%`},
		{"unknown field", "tracing:\n  sampler: 10%\n" + tail,
			`proxy.yaml:2: field sampler not found in Tracing`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := proxy.Parse("proxy.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// Tracing has its defaults, and none is on unless asked for; the access
// log goes to standard output unless the file says otherwise.
func TestObservabilityDefaults(t *testing.T) {
	const tail = "routes: [{upstream: a}]\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n"
	cfg, err := proxy.Parse("proxy.yaml", []byte(tail))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tracing != nil || cfg.AccessLog != "stdout" {
		t.Errorf("got tracing %v, access log %q; want none and stdout", cfg.Tracing, cfg.AccessLog)
	}
	path := filepath.Join(t.TempDir(), "a.log")
	cfg, err = proxy.Parse("proxy.yaml", []byte("access_log: "+path+"\ntracing: {sample: 10%}\n"+tail))
	if err != nil {
		t.Fatal(err)
	}
	tr := cfg.Tracing
	if cfg.AccessLog != path || tr.Exporter != "otlp" || tr.Endpoint != "http://127.0.0.1:4318/v1/traces" || *tr.Sample != 0.1 || tr.ServiceName != "towerproxy" {
		t.Errorf("got access log %q, tracing %+v (sample %v)", cfg.AccessLog, *tr, *tr.Sample)
	}
}

// An access log that cannot be opened is New's error, and a reload to
// one is refused, the log in force staying.
func TestAccessLogCannotOpen(t *testing.T) {
	cfg, err := proxy.Quick(":0", []string{"http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.AccessLog = dir // a directory: not a file to append to
	if _, err := proxy.New(cfg); err == nil {
		t.Fatal("New opened a directory as its access log")
	}
	cfg.AccessLog = "off"
	p, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(t.Context())
	next := *cfg
	next.AccessLog = dir
	if err := p.Reload(&next); err == nil {
		t.Error("Reload opened a directory as its access log")
	}
	if got := p.Config().AccessLog; got != "off" {
		t.Errorf("access log in force %q, want off", got)
	}
}
