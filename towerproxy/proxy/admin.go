package proxy

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/towergo/tower/towerproxy/internal/live"
)

// AdminHandler returns the handler of the admin listener, which [Server]
// serves beside its own /healthz:
//
//	/metrics   the metrics in Prometheus's text format
//	/status    the proxy's state now, as JSON: its routes, and the numbers
//	           of the live page's last frame
//	/live/     the live page: per upstream, over the last five minutes,
//	           its limit, requests in flight, goodput, p50 and p99,
//	           errors, and each backend's state, updated every second
//	/          redirects to /live/
//
// The admin listener is bound to localhost by default (Config.Admin):
// what it shows is for the operators, not for the proxied clients.
func (p *Proxy) AdminHandler() http.Handler {
	o := p.obs
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.m.reg, promhttp.HandlerOpts{Registry: o.m.reg}))
	mux.HandleFunc("GET /status", o.status)
	mux.Handle("GET /live/", o.history.Handler("/live/"))
	mux.Handle("GET /{$}", http.RedirectHandler("/live/", http.StatusFound))
	return mux
}

// Registry returns the registry of the proxy's metrics, for a program
// that embeds the proxy and serves its metrics with its own: register it
// with a prometheus.Gatherers, or register collectors of its own in it.
func (p *Proxy) Registry() *prometheus.Registry { return p.obs.m.reg }

// status is what /status answers.
type status struct {
	Started time.Time   `json:"started"`
	Uptime  float64     `json:"uptime_seconds"`
	Listen  string      `json:"listen"`
	Routes  []statusRt  `json:"routes"`
	Now     *live.Frame `json:"now"` // the live page's last frame; null in the first second
}

type statusRt struct {
	Host     string `json:"host,omitempty"`
	Path     string `json:"path"`
	Upstream string `json:"upstream"`
}

func (o *observer) status(w http.ResponseWriter, r *http.Request) {
	cfg := o.p.Config()
	st := status{Started: o.started, Uptime: time.Since(o.started).Seconds(), Listen: cfg.Listen, Routes: []statusRt{}, Now: o.history.Last()}
	for _, rc := range cfg.Routes {
		st.Routes = append(st.Routes, statusRt{Host: rc.Host, Path: rc.Path, Upstream: rc.Upstream})
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(st)
}
