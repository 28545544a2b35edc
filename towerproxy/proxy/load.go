package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
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
	durationOr(&c.Server.BodyTimeout, time.Minute)
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
		if h := u.Hedge; h != nil {
			if h.Percentile == 0 {
				h.Percentile = 95
			}
			if h.MinRequests == 0 {
				h.MinRequests = 100
			}
			durationOr(&h.Period, 10*time.Second)
		}
		if b := u.Breaker; b != nil {
			if b.Failures == 0 {
				b.Failures = 5
			}
			durationOr(&b.Delay, 5*time.Second)
			durationOr(&b.MaxDelay, 5*time.Minute)
		}
	}
}

func durationOr(d *Duration, v time.Duration) {
	if *d == 0 {
		*d = Duration(v)
	}
}
