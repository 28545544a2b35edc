package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Load reads the configuration in the YAML file at path, with [Parse].
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a configuration from YAML data, strictly: a field it does
// not know, a value of the wrong kind (a bad duration, size, rate or
// URL), a route without an upstream or to one not defined, an upstream
// without backends: each is an error that names the file (name) and the
// line, "proxy.yaml:12: ...", and nothing is returned. The defaults fill
// in what the file leaves out.
func Parse(name string, data []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, located(name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, errEOF) || err.Error() == "EOF" {
			return nil, fmt.Errorf("%s: the file is empty: it needs routes and upstreams", name)
		}
		return nil, located(name, err)
	}
	c.defaults()
	if err := c.check(locator{&root}); err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	return &c, nil
}

var errEOF = errors.New("EOF")

// Quick returns the configuration of the quick start: listen on listen,
// send every request to the backends (URLs), every protection on with its
// defaults, as `towerproxy -listen :8080 -to http://a,http://b` does.
func Quick(listen string, backends []string) (*Config, error) {
	c := &Config{Listen: listen, Upstreams: map[string]*Upstream{"default": {}}}
	for _, b := range backends {
		u, err := parseURL(strings.TrimSpace(b))
		if err != nil {
			return nil, fmt.Errorf("-to: %w", err)
		}
		c.Upstreams["default"].Backends = append(c.Upstreams["default"].Backends, u)
	}
	c.Routes = []Route{{Path: "/", Upstream: "default"}}
	c.defaults()
	if err := c.check(locator{}); err != nil {
		return nil, fmt.Errorf("-to:%w", err)
	}
	return c, nil
}

// lineError is an error of the value at a line of the file.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("%d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

// yamlLine finds the line yaml's own messages name.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// located returns err, an error of decoding the file name, as
// "name:line: message".
func located(name string, err error) error {
	var le *lineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %w", name, le.line, le.err)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			if m := yamlLine.FindStringSubmatch(e); m != nil {
				msgs[i] = name + ":" + m[1] + ": " + friendly(m[2])
			} else {
				msgs[i] = name + ": " + e
			}
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], m[2])
	}
	return fmt.Errorf("%s: %w", name, err)
}

// friendly rewrites yaml's names of this package's types.
func friendly(msg string) string {
	for _, r := range []struct{ from, to string }{
		{"in type proxy.Config", "at the top level"},
		{"in type proxy.", "in "},
	} {
		msg = strings.ReplaceAll(msg, r.from, r.to)
	}
	return msg
}

// scalar returns n's value, or an error naming its line if n is not a
// scalar.
func scalar(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", &lineError{n.Line, errors.New("want a single value here")}
	}
	return n.Value, nil
}

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, d, parseDuration)
}

func (s *Size) UnmarshalYAML(n *yaml.Node) error { return decodeScalar(n, s, parseSize) }

func (p *Percent) UnmarshalYAML(n *yaml.Node) error { return decodeScalar(n, p, parsePercent) }

func (u *URL) UnmarshalYAML(n *yaml.Node) error { return decodeScalar(n, u, parseURL) }

func (p *Prefix) UnmarshalYAML(n *yaml.Node) error { return decodeScalar(n, p, parsePrefix) }

func (r *Rate) UnmarshalYAML(n *yaml.Node) error { return decodeScalar(n, r, parseRate) }

// decodeScalar sets *v to parse of n's value, or returns its error at n's
// line.
func decodeScalar[T any](n *yaml.Node, v *T, parse func(string) (T, error)) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	x, err := parse(s)
	if err != nil {
		return &lineError{n.Line, err}
	}
	*v = x
	return nil
}

// locator finds the line of a value in the file, for the errors found
// after decoding; its lines are 0 for a Config that came from no file.
type locator struct{ root *yaml.Node }

// line returns the line of the value at path (map keys and list
// indexes), or of the nearest enclosing value found.
func (l locator) line(path ...any) int {
	if l.root == nil || len(l.root.Content) == 0 {
		return 0
	}
	n := l.root.Content[0]
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						line, next = n.Content[i].Line, n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// errorAt returns an error of the value at path.
func (l locator) errorAt(format string, path []any, args ...any) error {
	return &lineError{l.line(path...), fmt.Errorf(format, args...)}
}

// defaults fills in what c leaves out.
func (c *Config) defaults() {
	or := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	or(&c.Listen, ":8080")
	or(&c.Admin, "127.0.0.1:9901")
	or(&c.AccessLog, "stdout")
	or(&c.Admission.Limit, "gradient2")
	if c.Admission.Queue == nil {
		q := Duration(25 * time.Millisecond)
		c.Admission.Queue = &q
	}
	durationOr(&c.Server.ReadHeaderTimeout, 10*time.Second)
	durationOr(&c.Server.IdleTimeout, 2*time.Minute)
	durationOr(&c.Server.DrainTimeout, 30*time.Second)
	if c.Server.MaxHeaderBytes == 0 {
		c.Server.MaxHeaderBytes = 1 << 20
	}
	if c.Redis != nil {
		or(&c.Redis.Fail, "open")
	}
	if c.Tracing != nil {
		c.Tracing.defaults()
	}
	for i := range c.Routes {
		r := &c.Routes[i]
		or(&r.Path, "/")
		or(&r.Priority, "normal")
		if rl := r.RateLimit; rl != nil {
			or(&rl.Key, "client_ip")
			if rl.Burst == 0 && rl.Rate.N > 0 {
				rl.Burst = max(1, int(int64(rl.Rate.N)*int64(time.Second)/int64(rl.Rate.Per)))
			}
		}
	}
	for _, u := range c.Upstreams {
		if u == nil {
			continue
		}
		or(&u.Protocol, "http1")
		or(&u.HostHeader, "client")
		or(&u.Limit, "gradient2")
		durationOr(&u.Timeout.Try, 10*time.Second)
		durationOr(&u.Timeout.Overall, 30*time.Second)
		if u.Retry.Attempts == 0 {
			u.Retry.Attempts = 2
		}
		if u.Retry.Statuses == nil {
			u.Retry.Statuses = []int{502, 503, 504}
		}
		or(&u.Retry.Methods, "idempotent")
		if u.Retry.Budget == 0 {
			u.Retry.Budget = 0.2
		}
		if u.Health.Path != "" {
			durationOr(&u.Health.Interval, 5*time.Second)
			durationOr(&u.Health.Timeout, time.Second)
			if u.Health.Rise == 0 {
				u.Health.Rise = 2
			}
			if u.Health.Fall == 0 {
				u.Health.Fall = 3
			}
		}
		if u.Outlier.MaxShare == 0 {
			u.Outlier.MaxShare = 0.5
		}
		if u.DNS != nil {
			durationOr(&u.DNS.Every, 10*time.Second)
		}
		if u.Hedge != nil && u.Hedge.Percentile == 0 {
			u.Hedge.Percentile = 95
		}
	}
}

func durationOr(d *Duration, v time.Duration) {
	if *d == 0 {
		*d = Duration(v)
	}
}

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
	}
	return nil
}

// priorities maps the priorities' names.
var priorities = map[string]int{"low": 0, "normal": 1, "critical": 2}
