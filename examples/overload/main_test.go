package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// memory serves h in memory: each request runs h.ServeHTTP on a goroutine
// of its own, into a recorder. A client whose context ends stops waiting,
// as over a network, and the handler sees its request's context end, as a
// server sees its client go away.
func memory(h http.Handler) (http.RoundTripper, string, func()) {
	m := &memTransport{h: h}
	return m, "http://overload.test/", m.wg.Wait
}

type memTransport struct {
	h  http.Handler
	wg sync.WaitGroup
}

func (m *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	m.wg.Go(func() {
		defer close(done)
		m.h.ServeHTTP(rec, req)
	})
	select {
	case <-done:
		return rec.Result(), nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// The program, on the virtual clock: its two lines, exactly.
func TestOverload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		run(&out, memory)
		const want = `unprotected: goodput=39/s p99=2000ms errors=80%
protected: goodput=200/s p99=39ms shed=50%
adaptive: goodput=200/s p99=40ms shed=50%
`
		if got := out.String(); got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
}

// The goals: each protected server's goodput, the static limit's and the
// adaptive one's, at least 90% of its capacity, and its p99 at most a
// tenth of the bare server's; and each run is over within clientTimeout
// of its last request.
func TestOverloadGoals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		results := measure(memory)
		if got, bound := time.Since(start), time.Duration(len(results))*(duration+clientTimeout); got > bound {
			t.Errorf("the %d runs took %v, want at most %v", len(results), got, bound)
		}
		bare := results[0].stats
		for _, r := range results[1:] {
			if capacity := workers * int(time.Second/serviceTime); r.stats.goodput*10 < capacity*9 {
				t.Errorf("%s goodput %d/s, want at least 90%% of the capacity, %d/s", r.name, r.stats.goodput, capacity)
			}
			if r.stats.p99*10 > bare.p99 {
				t.Errorf("%s p99 %v, want at most a tenth of the unprotected p99 %v", r.name, r.stats.p99, bare.p99)
			}
		}
	})
}

// The backend serves 200 requests per second, however many wait: eight
// callers sending a request as soon as the last is answered get 200
// answers in the first second, the last two at exactly 1s.
func TestBackendCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend()
		start := time.Now()
		var (
			mu   sync.Mutex
			done []time.Duration
			wg   sync.WaitGroup
		)
		for range 8 {
			wg.Go(func() {
				for time.Since(start) < time.Second {
					rec := httptest.NewRecorder()
					b.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
					if rec.Code != 200 || rec.Body.String() != "ok" {
						t.Errorf("got %d %q, want 200 %q", rec.Code, rec.Body.String(), "ok")
					}
					mu.Lock()
					done = append(done, time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		inFirstSecond := 0
		for _, d := range done {
			if d <= time.Second {
				inFirstSecond++
			}
		}
		slices.Sort(done)
		if inFirstSecond != 200 || done[0] != serviceTime || done[199] != time.Second {
			t.Errorf("got %d answers in the first second, the first at %v and the 200th at %v; want 200, at 10ms and 1s", inFirstSecond, done[0], done[199])
		}
	})
}

// A request whose client leaves while it waits for a worker is dropped at
// once, and takes no worker's time.
func TestBackendDropsRequestWhoseClientLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend()
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() { b.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) })
		}
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		if got := time.Since(start); got != 5*time.Millisecond || rec.Body.Len() != 0 {
			t.Errorf("the request whose client left returned at %v with %q, want at 5ms with nothing", got, rec.Body.String())
		}
		wg.Wait()
		b.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if got := time.Since(start); got != 2*serviceTime {
			t.Errorf("the next request was answered at %v, want %v: the dropped one took no worker's time", got, 2*serviceTime)
		}
	})
}

// The protected server lets eight requests in, two served and six waiting,
// and sheds the ninth at once with 503 and Retry-After; the eight are
// answered 10, 10, 20, 20, 30, 30, 40 and 40ms later.
func TestProtectedShedsBeyondEight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := protect(newBackend())
		start := time.Now()
		var (
			mu       sync.Mutex
			answered []time.Duration
			wg       sync.WaitGroup
		)
		for range inFlight {
			wg.Go(func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
				if rec.Code != 200 {
					t.Errorf("got %d, want 200", rec.Code)
				}
				mu.Lock()
				answered = append(answered, time.Since(start))
				mu.Unlock()
			})
			synctest.Wait()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" || time.Since(start) != 0 {
			t.Errorf("the ninth request: got %d, Retry-After %q at %v; want 503, 1 at once", rec.Code, rec.Header().Get("Retry-After"), time.Since(start))
		}
		wg.Wait()
		slices.Sort(answered)
		ms := time.Millisecond
		if want := []time.Duration{10 * ms, 10 * ms, 20 * ms, 20 * ms, 30 * ms, 30 * ms, 40 * ms, 40 * ms}; !slices.Equal(answered, want) {
			t.Errorf("answered at %v, want %v", answered, want)
		}
	})
}

// The schedule is 4,000 instants, one in each interval of 2.5ms, the same
// at every run.
func TestScheduleIsBounded(t *testing.T) {
	at := schedule()
	if len(at) != requests || requests != 4000 {
		t.Fatalf("got %d instants, want 4000", len(at))
	}
	for i, d := range at {
		if lo := time.Duration(i) * interval; d < lo || d >= lo+interval {
			t.Fatalf("instant %d is %v, want it in [%v, %v)", i, d, lo, lo+interval)
		}
	}
	if !slices.Equal(at, schedule()) {
		t.Error("two schedules differ, want the same")
	}
	if last := at[len(at)-1]; last >= duration {
		t.Errorf("the last instant is %v, want it before %v", last, duration)
	}
}

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	var out []outcome
	for i := range 100 {
		switch {
		case i < 50: // good
			out = append(out, outcome{latency: time.Duration(i) * ms, status: 200})
		case i < 60: // a 200 too late
			out = append(out, outcome{latency: 1500 * ms, status: 200})
		case i < 90: // shed
			out = append(out, outcome{latency: ms, status: 503})
		default: // no answer
			out = append(out, outcome{latency: 2000 * ms})
		}
	}
	got := summarize(out)
	want := stats{goodput: 5, p99: 2000 * ms, errors: 40, shed: 30}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
