package proxy

import (
	"time"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerproxy/internal/live"
)

// A sample is the totals the live page's rates are the differences of,
// taken at one instant.
type sample struct {
	at        time.Time
	answered  int64 // requests the proxy answered
	shed      int64 // by the proxy's limit
	upstreams map[string]upstreamSample
	backends  map[backendKey]backendSample
}

type upstreamSample struct {
	goodput, errors, shed, retries int64
	latency                        *live.Counts
}

type backendKey struct{ upstream, addr string }

type backendSample struct {
	requests, errors int64
	latency          *live.Counts
}

// sampleEvery publishes a frame every d until the observer closes.
func (o *observer) sampleEvery(d time.Duration) {
	defer close(o.done)
	t := time.NewTicker(d)
	defer t.Stop()
	_, prev := o.frame(nil, time.Now())
	for {
		select {
		case <-o.stop:
			return
		case now := <-t.C:
			var f *live.Frame
			f, prev = o.frame(prev, now)
			o.history.Publish(f)
		}
	}
}

// frame returns the frame of the state in force at now, its rates the
// changes since prev (none if prev is nil), and the sample it took.
func (o *observer) frame(prev *sample, now time.Time) (*live.Frame, *sample) {
	s := o.p.state.Load()
	cur := &sample{at: now, answered: o.http.answered.Load(), shed: o.shed.Load(), upstreams: map[string]upstreamSample{}, backends: map[backendKey]backendSample{}}
	f := &live.Frame{Time: now.UnixMilli(), Upstreams: []live.Upstream{}}
	rate := func(n, was int64) float64 {
		if prev == nil {
			return 0
		}
		return max(0, float64(n-was)/now.Sub(prev.at).Seconds()) // 0 for a counter made anew
	}
	if a := s.admission.obs; a != nil {
		if a.limited {
			f.Proxy.Limit = a.limit.Get(metrics.Limit)
		}
		f.Proxy.InFlight, f.Proxy.Waiting = a.limit.Get(metrics.InFlight), a.limit.Get(metrics.Waiting)
	}
	if prev != nil {
		f.Proxy.Requests, f.Proxy.Shed = rate(cur.answered, prev.answered), rate(cur.shed, prev.shed)
	}
	for _, name := range sortedKeys(s.upstreams) {
		uo := s.upstreams[name].obs
		if uo == nil {
			continue
		}
		st := uo.stats
		us := upstreamSample{goodput: st.goodput.Load(), errors: st.errors.Load(), shed: st.shedN.Load(), retries: st.retriesN.Load(), latency: st.latency.Snapshot()}
		cur.upstreams[name] = us
		was := prev.upstream(name)
		lat := us.latency.Since(was.latency)
		fu := live.Upstream{
			Name:     name,
			InFlight: uo.limit.Get(metrics.InFlight),
			Waiting:  uo.limit.Get(metrics.Waiting),
			Goodput:  rate(us.goodput, was.goodput),
			Errors:   rate(us.errors, was.errors),
			Shed:     rate(us.shed, was.shed),
			Retries:  rate(us.retries, was.retries),
			P50:      ms(lat.Quantile(0.5)),
			P99:      ms(lat.Quantile(0.99)),
			Backends: []live.Backend{},
		}
		if uo.limited {
			fu.Limit = uo.limit.Get(metrics.Limit)
		}
		for _, b := range uo.backendList() {
			bs := backendSample{requests: b.requests.Load(), errors: b.errors.Load(), latency: b.latency.Snapshot()}
			key := backendKey{name, b.addr}
			cur.backends[key] = bs
			bw := prev.backend(key)
			fu.Backends = append(fu.Backends, live.Backend{
				Addr:     b.addr,
				State:    stateNames[b.state(now)].page,
				Requests: rate(bs.requests, bw.requests),
				Errors:   rate(bs.errors, bw.errors),
				InFlight: b.inflight.Load(),
				P99:      ms(bs.latency.Since(bw.latency).Quantile(0.99)),
			})
		}
		f.Upstreams = append(f.Upstreams, fu)
	}
	return f, cur
}

// upstream returns the sample of the upstream named, or a zero one.
func (s *sample) upstream(name string) upstreamSample {
	if s == nil {
		return upstreamSample{}
	}
	return s.upstreams[name]
}

// backend returns the sample of a backend, or a zero one.
func (s *sample) backend(k backendKey) backendSample {
	if s == nil {
		return backendSample{}
	}
	return s.backends[k]
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
