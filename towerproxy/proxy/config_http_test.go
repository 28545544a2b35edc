package proxy_test

import (
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// The settings of the HTTP side: h2c cannot go with tls, and the body
// timeout has its default.
func TestParseHTTPSettings(t *testing.T) {
	_, err := proxy.Parse("proxy.yaml", []byte("h2c: true\ntls: {cert: c.pem, key: k.pem}\nroutes: [{upstream: a}]\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n"))
	if want := "proxy.yaml:1: h2c is HTTP/2 without TLS: with tls, clients get HTTP/2 by ALPN; leave h2c out"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	cfg, err := proxy.Parse("proxy.yaml", []byte("routes: [{upstream: a}]\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(cfg.Server.BodyTimeout); got != time.Minute {
		t.Errorf("got body_timeout %v, want 1m", got)
	}
}
