package h1

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkRoundTrip is GETs and their 3-byte answers over kept-alive
// loopback connections, 16 at once per P as on a loaded proxy, each read
// to its end: this Transport against net/http's, whose request goes to a
// connection's write loop and whose answer comes back from its read loop.
// The server, in the same process, is in the figures too. One request at
// a time, net/http's is the faster: its hand-offs keep a thread spinning
// that this Transport's caller, parked in its read, lets sleep, and waking
// a thread is dear on a VM. Under load no thread sleeps.
func BenchmarkRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	defer srv.Close()
	std := &http.Transport{MaxIdleConnsPerHost: 64}
	defer std.CloseIdleConnections()
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"h1", New(std, Options{MaxIdlePerHost: 64, IdleTimeout: time.Minute})},
		{"net-http", std},
	} {
		b.Run(c.name, func(b *testing.B) {
			req, err := http.NewRequest("GET", srv.URL+"/", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(16) // 16 requests in flight per P: a loaded proxy's
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := c.rt.RoundTrip(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			})
		})
	}
}
