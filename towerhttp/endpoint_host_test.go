package towerhttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/towerhttp"
)

// The Host header an endpoint sends, over loopback: the request's own by
// default (its Host, or its URL's host), and the backend's host:port with
// WithTargetHost, whatever the request says.
func TestEndpointHost(t *testing.T) {
	checkGoroutines(t)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Host)
	}))
	backend := strings.TrimPrefix(srv.URL, "http://")
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	none := tower.Stack[*http.Request, *http.Response]()
	for _, tt := range []struct {
		name string
		opts []towerhttp.EndpointOption
		host string // the request's Host, if not ""
		want string
	}{
		{"default, the URL's host", nil, "", "service.example"},
		{"default, the request's Host", nil, "client.example", "client.example"},
		{"WithTargetHost, over the URL's host", []towerhttp.EndpointOption{towerhttp.WithTargetHost()}, "", backend},
		{"WithTargetHost, over the request's Host", []towerhttp.EndpointOption{towerhttp.WithTargetHost()}, "client.example", backend},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := towerhttp.NewBalancedTransport(discover.NewList(
				towerhttp.NewEndpoint(base, mustParse(t, srv.URL), none, tt.opts...),
			), none)
			defer tr.Close()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://service.example/", nil)
			req.Host = tt.host
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != tt.want {
				t.Errorf("the backend got Host %q, want %q", b, tt.want)
			}
		})
	}
}
