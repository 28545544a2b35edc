package h1_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/towergo/tower/towerproxy/internal/h1"
)

// A Transport sends plain HTTP/1.1 itself and passes the rest (here, the
// request that asks to switch protocols) to its fallback.
func Example() {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	fallback := &http.Transport{}
	t := h1.New(fallback, h1.Options{MaxIdlePerHost: 8, IdleTimeout: time.Minute})
	defer t.Close()

	client := &http.Client{Transport: t}
	res, err := client.Get(backend.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 ok
}
