package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// host_header: the backend sees the client's Host by default, and its own
// host:port with host_header: backend; X-Forwarded-Host is the client's
// either way.
func TestHostHeader(t *testing.T) {
	b := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Host+" "+r.Header.Get("X-Forwarded-Host"))
	})
	backend := strings.TrimPrefix(b.URL, "http://")
	for _, tt := range []struct{ setting, want string }{
		{"client", "client.example client.example"},
		{"backend", backend + " client.example"},
	} {
		p := start(t, `
routes: [{upstream: u}]
upstreams:
  u: {backends: [%s], host_header: %s}
`, b.URL, tt.setting)
		req, _ := http.NewRequestWithContext(t.Context(), "GET", p.URL+"/", nil)
		req.Host = "client.example"
		res, err := newClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(got) != tt.want {
			t.Errorf("host_header: %s: the backend got Host and X-Forwarded-Host %q, want %q", tt.setting, got, tt.want)
		}
	}
}
