package towerhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// PriorityHeader reads the header in any case of its name and value; a
// missing or unknown value is normal.
func TestPriorityHeader(t *testing.T) {
	f := towerhttp.PriorityHeader("x-priority")
	for _, tt := range []struct {
		values []string
		want   tower.Priority
	}{
		{nil, tower.PriorityNormal},
		{[]string{"low"}, tower.PriorityLow},
		{[]string{"CRITICAL"}, tower.PriorityCritical},
		{[]string{"Normal"}, tower.PriorityNormal},
		{[]string{"urgent"}, tower.PriorityNormal},
		{[]string{"low", "critical"}, tower.PriorityLow},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, v := range tt.values {
			r.Header.Add("X-Priority", v)
		}
		if got := f(r); got != tt.want {
			t.Errorf("header %q: got %v, want %v", tt.values, got, tt.want)
		}
	}
}

// The priority reaches the stack's Ready and the handler's context; a
// normal request's context is the one net/http gave.
func TestWithPriority(t *testing.T) {
	var ready, handler tower.Priority
	var sameCtx bool
	type key struct{}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler = tower.PriorityFrom(r.Context())
		sameCtx = r.Context().Value(key{}) == "net/http's"
	})
	probe := tower.LayerFunc[*http.Request, towerhttp.Response](func(inner tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
		return readyHook{inner, func(p tower.Priority) { ready = p }}
	})
	h := towerhttp.NewHandler(app, probe, towerhttp.WithPriority(towerhttp.PriorityHeader("X-Priority")))
	for _, v := range []string{"low", "", "critical"} {
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(context.WithValue(t.Context(), key{}, "net/http's"))
		if v != "" {
			r.Header.Set("X-Priority", v)
		}
		want := map[string]tower.Priority{"low": tower.PriorityLow, "": tower.PriorityNormal, "critical": tower.PriorityCritical}[v]
		h.ServeHTTP(httptest.NewRecorder(), r)
		if ready != want || handler != want || !sameCtx {
			t.Errorf("%q: Ready saw %v, the handler %v (its context net/http's: %v); want %v, %v, true", v, ready, handler, sameCtx, want, want)
		}
	}
}

func TestWithPriorityPanics(t *testing.T) {
	towertest.Panics(t, "towerhttp.WithPriority: nil function", func() { towerhttp.WithPriority(nil) })
	towertest.Panics(t, "towerhttp.PriorityHeader: empty header name", func() { towerhttp.PriorityHeader("") })
}

// readyHook is a service that tells saw the priority of each Ready's
// context.
type readyHook struct {
	inner tower.Service[*http.Request, towerhttp.Response]
	saw   func(tower.Priority)
}

func (s readyHook) Ready(ctx context.Context) (tower.Permit[*http.Request, towerhttp.Response], error) {
	s.saw(tower.PriorityFrom(ctx))
	return s.inner.Ready(ctx)
}
