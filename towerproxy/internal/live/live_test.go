package live

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Quantiles over an interval are read within a bucket's width (1/16 of
// its lower bound) of the true ones, from the latencies observed in it.
func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	h.Observe(time.Hour) // before the interval
	before := h.Snapshot()
	for i := 1; i <= 1000; i++ {
		h.Observe(time.Duration(i) * time.Millisecond)
	}
	c := h.Snapshot().Since(before)
	if got := c.Total(); got != 1000 {
		t.Fatalf("got %d latencies, want 1000", got)
	}
	for _, q := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := c.Quantile(q.q)
		if got < q.want || got > q.want+q.want/16 {
			t.Errorf("quantile %v = %v, want %v to %v", q.q, got, q.want, q.want+q.want/16)
		}
	}
	if got := (&Counts{}).Quantile(0.5); got != 0 {
		t.Errorf("quantile of nothing = %v, want 0", got)
	}
}

// The ends of the scale: below a microsecond is in the first bucket,
// beyond its end in the last, and each bucket's upper bound is the next
// one's lower bound less 1ns.
func TestHistogramBuckets(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{-1, 0}, {0, 0}, {1023, 0}, {1024, 0}, {1024 + 64, 1}, {1 << 40, numBuckets - 1}} {
		if got := bucketOf(c.d); got != c.want {
			t.Errorf("bucketOf(%d) = %d, want %d", c.d, got, c.want)
		}
	}
	for i := range numBuckets - 1 {
		if got := bucketOf(upperBound(i)); got != i {
			t.Fatalf("bucketOf(upperBound(%d)) = %d", i, got)
		}
		if got := bucketOf(upperBound(i) + 1); got != i+1 {
			t.Fatalf("bucketOf(upperBound(%d)+1) = %d, want %d", i, got, i+1)
		}
	}
}

// A page that connects gets the frames kept, then each new one.
func TestHistoryEvents(t *testing.T) {
	h := NewHistory(2)
	for i := range 3 {
		h.Publish(&Frame{Time: int64(i)})
	}
	srv := httptest.NewServer(h.Handler("/live/"))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/live/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	r := bufio.NewReader(res.Body)
	event := func() string {
		var lines []string
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if l == "\n" {
				return strings.Join(lines, "|")
			}
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	frame := func(t int) string {
		return `{"t":` + string(rune('0'+t)) + `,"proxy":{"limit":0,"inflight":0,"waiting":0,"requests":0,"shed":0},"upstreams":null}`
	}
	if got, want := event(), "event: history|data: ["+frame(1)+","+frame(2)+"]"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	h.Publish(&Frame{Time: 3})
	if got, want := event(), "event: frame|data: "+frame(3); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if h.Last().Time != 3 {
		t.Errorf("Last is %d, want 3", h.Last().Time)
	}
}

// The page and its script and style are served, without anything from
// elsewhere.
func TestPageServed(t *testing.T) {
	srv := httptest.NewServer(NewHistory(1).Handler("/live/"))
	defer srv.Close()
	for _, c := range []struct{ path, want string }{
		{"/live/", `<script src="live.js">`},
		{"/live/live.js", `new EventSource("events")`},
		{"/live/live.css", `.state[data-state="ejected"]`},
	} {
		res, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: got %d, want 200 with %s", c.path, res.StatusCode, c.want)
		}
		if strings.Contains(string(body), "http://") || strings.Contains(string(body), "https://") {
			t.Errorf("%s refers to another site", c.path)
		}
	}
}
