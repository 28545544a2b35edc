// A user's program of towerproxy: the proxy embedded, in front of a
// backend of the program's own, both on loopback.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/towergo/tower/towerproxy/proxy"
)

func main() {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello via %s", r.Header.Get("Via"))
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
	res, err := http.Get(front.URL)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.Status, string(body))
}
