package proxy

import (
	"slices"
	"strings"
	"time"
)

// limits are the names of the adaptive limits.
var limits = []string{"gradient2", "vegas", "aimd", "off"}

// check returns the first thing wrong with c, at its line.
func (c *Config) check(l locator) error {
	if len(c.Routes) == 0 {
		return l.errorAt("no routes: add at least one, as `routes: [{path: /, upstream: name}]`", []any{"routes"})
	}
	if len(c.Upstreams) == 0 {
		return l.errorAt("no upstreams: add at least one with its backends", []any{"upstreams"})
	}
	if c.TLS != nil && (c.TLS.Cert == "" || c.TLS.Key == "") {
		return l.errorAt("tls needs both cert and key", []any{"tls"})
	}
	if c.TLS != nil && c.H2C {
		return l.errorAt("h2c is HTTP/2 without TLS: with tls, clients get HTTP/2 by ALPN; leave h2c out", []any{"h2c"})
	}
	if err := c.checkObservability(l); err != nil {
		return err
	}
	if !slices.Contains(limits, c.Admission.Limit) {
		return l.errorAt("admission.limit %q is not one of %s", []any{"admission", "limit"}, c.Admission.Limit, strings.Join(limits, ", "))
	}
	if c.Redis != nil {
		if c.Redis.Addr == "" {
			return l.errorAt("redis needs addr", []any{"redis"})
		}
		if c.Redis.Fail != "open" && c.Redis.Fail != "closed" {
			return l.errorAt("redis.fail %q is neither open nor closed", []any{"redis", "fail"}, c.Redis.Fail)
		}
	}
	for i, r := range c.Routes {
		at := []any{"routes", i}
		if r.Upstream == "" {
			return l.errorAt("route %d has no upstream", at, i+1)
		}
		if c.Upstreams[r.Upstream] == nil {
			return l.errorAt("route %d: upstream %q is not defined under upstreams", append(at, "upstream"), i+1, r.Upstream)
		}
		if !strings.HasPrefix(r.Path, "/") {
			return l.errorAt("route %d: path %q does not start with /", append(at, "path"), i+1, r.Path)
		}
		if r.Host != "" && strings.ContainsAny(r.Host, "/ :") {
			return l.errorAt("route %d: host %q is not a host name", append(at, "host"), i+1, r.Host)
		}
		if _, ok := priorities[r.Priority]; !ok {
			return l.errorAt("route %d: priority %q is not low, normal or critical", append(at, "priority"), i+1, r.Priority)
		}
		if rl := r.RateLimit; rl != nil {
			if rl.Rate.N == 0 {
				return l.errorAt("route %d: rate_limit needs a rate, as 100/s", append(at, "rate_limit"), i+1)
			}
			if rl.Key != "client_ip" && !strings.HasPrefix(rl.Key, "header:") {
				return l.errorAt("route %d: rate_limit.key %q is neither client_ip nor header:Name", append(at, "rate_limit", "key"), i+1, rl.Key)
			}
			if rl.Burst < 0 {
				return l.errorAt("route %d: rate_limit.burst %d is negative", append(at, "rate_limit", "burst"), i+1, rl.Burst)
			}
			if rl.Fleet && c.Redis == nil {
				return l.errorAt("route %d: a fleet rate_limit needs redis", append(at, "rate_limit", "fleet"), i+1)
			}
		}
	}
	names := make([]string, 0, len(c.Upstreams))
	for name := range c.Upstreams {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		u := c.Upstreams[name]
		at := []any{"upstreams", name}
		if u == nil {
			return l.errorAt("upstream %q is empty: give it backends, dns or file", at, name)
		}
		sources := 0
		for _, set := range []bool{len(u.Backends) > 0, u.DNS != nil, u.File != ""} {
			if set {
				sources++
			}
		}
		if sources != 1 {
			return l.errorAt("upstream %q needs exactly one of backends, dns and file", at, name)
		}
		if u.DNS != nil && (u.DNS.Name == "" || (!u.DNS.SRV && (u.DNS.Port < 1 || u.DNS.Port > 65535))) {
			return l.errorAt("upstream %q: dns needs a name, and a port unless srv", append(at, "dns"), name)
		}
		if u.Protocol != "http1" && u.Protocol != "h2c" {
			return l.errorAt("upstream %q: protocol %q is neither http1 nor h2c", append(at, "protocol"), name, u.Protocol)
		}
		if u.HostHeader != "client" && u.HostHeader != "backend" {
			return l.errorAt("upstream %q: host_header %q is neither client nor backend", append(at, "host_header"), name, u.HostHeader)
		}
		if !slices.Contains(limits, u.Limit) {
			return l.errorAt("upstream %q: limit %q is not one of %s", append(at, "limit"), name, u.Limit, strings.Join(limits, ", "))
		}
		if u.Timeout.Try > u.Timeout.Overall {
			return l.errorAt("upstream %q: timeout.try %v is longer than timeout.overall %v", append(at, "timeout"), name, time.Duration(u.Timeout.Try), time.Duration(u.Timeout.Overall))
		}
		if u.Retry.Attempts < 1 || u.Retry.Attempts > 10 {
			return l.errorAt("upstream %q: retry.attempts %d is not between 1 and 10", append(at, "retry", "attempts"), name, u.Retry.Attempts)
		}
		for _, s := range u.Retry.Statuses {
			if s < 400 || s > 599 {
				return l.errorAt("upstream %q: retry.statuses has %d, not an error status", append(at, "retry", "statuses"), name, s)
			}
		}
		if u.Retry.Methods != "idempotent" && u.Retry.Methods != "all" {
			return l.errorAt("upstream %q: retry.methods %q is neither idempotent nor all", append(at, "retry", "methods"), name, u.Retry.Methods)
		}
		if u.Health.Path != "" && !strings.HasPrefix(u.Health.Path, "/") {
			return l.errorAt("upstream %q: health.path %q does not start with /", append(at, "health", "path"), name, u.Health.Path)
		}
		if u.Health.Rise < 0 || u.Health.Fall < 0 {
			return l.errorAt("upstream %q: health.rise and health.fall must not be negative", append(at, "health"), name)
		}
		if h := u.Hedge; h != nil && (h.Percentile < 50 || h.Percentile >= 100) {
			return l.errorAt("upstream %q: hedge.percentile %v is not between 50 and 100", append(at, "hedge", "percentile"), name, h.Percentile)
		}
		if h := u.Hedge; h != nil && h.MinRequests < 0 {
			return l.errorAt("upstream %q: hedge.min_requests %d is negative", append(at, "hedge", "min_requests"), name, h.MinRequests)
		}
		if b := u.Breaker; b != nil && b.Failures < 1 {
			return l.errorAt("upstream %q: breaker.failures %d is not at least 1", append(at, "breaker", "failures"), name, b.Failures)
		}
		if b := u.Breaker; b != nil && b.Delay > b.MaxDelay {
			return l.errorAt("upstream %q: breaker.delay %v is longer than breaker.max_delay %v", append(at, "breaker"), name, time.Duration(b.Delay), time.Duration(b.MaxDelay))
		}
	}
	return nil
}

// priorities maps the priorities' names.
var priorities = map[string]int{"low": 0, "normal": 1, "critical": 2}
