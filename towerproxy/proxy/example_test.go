package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/towergo/tower/towerproxy/proxy"
)

// The proxy embedded in a Go program: the quick start's configuration (a
// route to one upstream of the backends given, every protection on with
// its defaults), served by the program's own server. A Server would
// listen, drain on Close and serve the admin listener too.
func Example() {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the backend, via %s", r.Header.Get("Via"))
	}))
	defer backend.Close()

	cfg, err := proxy.Quick(":0", []string{backend.URL})
	if err != nil {
		panic(err)
	}
	cfg.AccessLog = "off"
	p, err := proxy.New(cfg)
	if err != nil {
		panic(err)
	}
	defer p.Close(context.Background())
	front := httptest.NewServer(p)
	defer front.Close()

	res, err := http.Get(front.URL + "/greeting")
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.Status)
	fmt.Println(string(body))
	// Output:
	// 200 OK
	// hello from the backend, via 1.1 towerproxy
}
