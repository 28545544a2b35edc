package main

import (
	"strings"
	"testing"
)

// The peers are told the scenario's oracles, and only in the scenarios
// that have them.
func TestPeerOracles(t *testing.T) {
	byName := map[string]*scenario{}
	for i := range scenarios {
		byName[scenarios[i].name] = &scenarios[i]
	}
	s := func(sc string) setup {
		return setup{dir: "/tmp/x", listen: "127.0.0.1:8080", backends: []string{"127.0.0.1:9001", "127.0.0.1:9002"}, cpus: 1, nofile: 20000, sc: byName[sc]}
	}
	tests := []struct {
		conf     func(setup) string
		scenario string
		has      []string
		hasNot   []string
	}{
		{nginxConf, "overhead", []string{"least_conn;", "keepalive 256;", "proxy_next_upstream error timeout http_502 http_503 http_504;", "server 127.0.0.1:9002 max_fails=1 fail_timeout=10s;", "proxy_read_timeout 60000ms;"}, []string{"max_conns"}},
		{nginxConf, "slow1", []string{"proxy_read_timeout 100ms;"}, []string{"max_conns"}},
		{nginxConf, "overload", []string{"max_conns=4;"}, nil},
		{haproxyConf, "overhead", []string{"balance leastconn", "http-reuse always", "retry-on conn-failure empty-response response-timeout 502 503 504", "observe layer7 error-limit 3 on-error mark-down", "timeout server 30000ms", "server b1 127.0.0.1:9002"}, []string{"maxconn 4"}},
		{haproxyConf, "slow1", []string{"timeout server 100ms", "timeout check 100ms"}, []string{"maxconn 4"}},
		{haproxyConf, "overload", []string{"on-error mark-down maxconn 4", "timeout queue 25ms"}, nil},
		{caddyfile, "overhead", []string{"lb_policy least_conn", "unhealthy_status 5xx", "bind 127.0.0.1", "http://:8080 {"}, []string{"unhealthy_latency", "unhealthy_request_count"}},
		{caddyfile, "slow1", []string{"unhealthy_latency 100ms", "health_timeout 1s"}, []string{"unhealthy_request_count"}},
		{caddyfile, "drop", []string{"unhealthy_request_count 4", "lb_try_duration 25ms"}, []string{"unhealthy_latency"}},
	}
	for _, tt := range tests {
		conf := tt.conf(s(tt.scenario))
		for _, want := range tt.has {
			if !strings.Contains(conf, want) {
				t.Errorf("%s: no %q in\n%s", tt.scenario, want, conf)
			}
		}
		for _, not := range tt.hasNot {
			if strings.Contains(conf, not) {
				t.Errorf("%s: %q in\n%s", tt.scenario, not, conf)
			}
		}
	}
}
