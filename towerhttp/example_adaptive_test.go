package towerhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/towerhttp"
)

// A server protected with no number to tune: an adaptive limit, which
// moves with the handler's latency and drops, under a LoadShed, which
// turns away at once what the limit cannot take; and each request's
// priority from a header its own proxy sets. Near the limit, low priority
// is shed first, and critical still gets in.
//
// Here 3 slow requests fill the limit's room for low ones: its first
// window is a probe of the handler's no-load latency, at a quarter of the
// initial 20, so the limit is 5 for now, of which it keeps 1 for critical
// requests and 1 more from low ones. A low request is shed with 503, and
// a critical one is served.
func Example_adaptiveServer() {
	var inside sync.WaitGroup
	done := make(chan struct{})
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			inside.Done()
			<-done
		}
		fmt.Fprint(w, "hello")
	})

	protect := towerhttp.ServerStack().LoadShed().AdaptiveLimit(adaptive.Gradient2())
	h := towerhttp.NewHandler(app, protect, towerhttp.WithPriority(towerhttp.PriorityHeader("X-Priority")))

	var slow sync.WaitGroup
	inside.Add(3)
	for range 3 {
		slow.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/slow", nil)) })
	}
	inside.Wait()
	for _, priority := range []string{"low", "critical"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Priority", priority)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(priority+":", w.Code, strings.TrimSpace(w.Body.String()))
	}
	close(done)
	slow.Wait()
	// Output:
	// low: 503 service overloaded
	// critical: 200 hello
}
