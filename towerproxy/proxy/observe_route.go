package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
)

// A routeObs observes the requests of one route, as dispatch sends them
// to its upstream: their number by status class, their errors by reason
// and their latency, with the route's and its upstream's labels, and the
// upstream's totals for the live page.
type routeObs struct {
	o        *observer
	label    string
	up       *upstreamStats
	classes  [len(classNames)]prometheus.Counter
	errors   [len(reasonNames)]prometheus.Counter // [reasonNone] is nil
	duration prometheus.Observer
}

func (o *observer) route(rc *Route) *routeObs {
	label := routeLabel(rc)
	r := &routeObs{o: o, label: label, up: o.stats(rc.Upstream), duration: o.m.duration.WithLabelValues(label, rc.Upstream)}
	for i, c := range classNames[:classError] {
		r.classes[i] = o.m.requests.WithLabelValues(label, rc.Upstream, c)
	}
	for i, reason := range reasonNames[1:] {
		r.errors[i+1] = o.m.errors.WithLabelValues(label, rc.Upstream, reason)
	}
	return r
}

// start notes the route in the request's record, and returns when the
// request reached it.
func (r *routeObs) start(ctx context.Context) time.Time {
	if r.o.recording() {
		if rec := recordFrom(ctx); rec != nil {
			rec.routed(r.label, r.up.name)
		}
	}
	return time.Now()
}

// done counts a request that reached the route at start, and that its
// upstream's service answered with res or failed with err.
func (r *routeObs) done(start time.Time, res towerhttp.Response, err error) {
	d := time.Since(start)
	status, reason := res.StatusCode, reasonNone
	switch {
	case err == nil:
		if status >= 500 {
			reason = reason5xx
		}
	case tower.IsOverloaded(err):
		reason = reasonUpstreamLimit
	case tower.IsThrottled(err):
		reason = reasonRateLimit
	case tower.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded):
		reason = reasonTimeout
	case errors.Is(err, context.Canceled):
		reason = reasonCanceled
	default:
		reason = reasonError
	}
	if err != nil {
		status = towerhttp.StatusCode(err)
		if reason == reasonCanceled {
			status = 0 // the client went away: nothing is sent
		}
	}
	r.classes[classOf(status)].Inc()
	if reason != reasonNone {
		r.errors[reason].Inc()
	}
	switch reason {
	case reasonNone:
		r.up.goodput.Add(1)
	case reasonUpstreamLimit:
		r.up.shedN.Add(1)
	case reasonRateLimit:
		r.up.shedN.Add(1)
		r.up.rateLimited.Inc()
	case reason5xx, reasonTimeout, reasonError:
		r.up.errors.Add(1)
	}
	if err == nil {
		r.duration.Observe(d.Seconds())
		r.up.latency.Observe(d)
	}
}
