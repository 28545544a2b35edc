package proxy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/towergo/tower/towerproxy/proxy"
)

// observed is a proxy of a configuration, behind a test server, with its
// admin handler behind another.
type observed struct {
	p     *proxy.Proxy
	front *httptest.Server
	admin *httptest.Server
}

// startObserved parses yaml, in which each "{b0}", "{b1}", ... stands for the
// URL of backends[i], and starts its proxy.
func startObserved(t testing.TB, yaml string, backends []*httptest.Server, opts ...proxy.Option) *observed {
	t.Helper()
	for i, b := range backends {
		yaml = strings.ReplaceAll(yaml, fmt.Sprintf("{b%d}", i), b.URL)
	}
	cfg, err := proxy.Parse("proxy.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	quiet(cfg)
	p, err := proxy.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	s := &observed{p: p, front: httptest.NewServer(p), admin: httptest.NewServer(p.AdminHandler())}
	t.Cleanup(func() {
		s.front.Close()
		s.admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	return s
}

// doStatus sends a request of method to path and returns its status, with the
// body read and closed.
func doStatus(t *testing.T, method, url string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf [512]byte
	for {
		if _, err := res.Body.Read(buf[:]); err != nil {
			break
		}
	}
	return res.StatusCode
}

// value returns the sum of the values of the metrics named that have
// labels (and any others): a counter's or a gauge's value, a histogram's
// count.
func value(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// within calls cond every 10ms until it is true, for up to d, and
// reports whether it became true.
func within(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
