// Package live keeps the recent history of a proxy's numbers, one frame a
// second, and serves the live page that draws it: plain HTML, CSS and
// JavaScript embedded in the binary (no build step, nothing fetched from
// elsewhere), which receives the frames as server-sent events.
//
// The proxy makes a [Frame] each second and gives it to
// [History.Publish]; [History.Handler] serves the page at its prefix and
// the events at prefix + "events": first the frames kept (the last
// minutes), then each new one as it is published.
package live

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

// A Frame is what the proxy shows at one instant: its own admission, and
// each upstream's numbers and backends. Rates are per second over the
// interval since the frame before; latencies are in milliseconds, of the
// requests that ended in that interval.
type Frame struct {
	Time      int64      `json:"t"` // Unix milliseconds
	Proxy     Proxy      `json:"proxy"`
	Upstreams []Upstream `json:"upstreams"`
}

// Proxy is the admission of the whole proxy in a Frame.
type Proxy struct {
	Limit    int64   `json:"limit"`    // its adaptive limit now, 0 if it has none
	InFlight int64   `json:"inflight"` // requests admitted and not yet answered
	Waiting  int64   `json:"waiting"`  // requests waiting for a permit
	Requests float64 `json:"requests"` // requests answered, per second
	Shed     float64 `json:"shed"`     // requests its limit shed, per second
}

// Upstream is one upstream in a Frame.
type Upstream struct {
	Name     string    `json:"name"`
	Limit    int64     `json:"limit"`    // its adaptive limit now, 0 if it has none
	InFlight int64     `json:"inflight"` // requests in its limit now
	Waiting  int64     `json:"waiting"`  // requests waiting for its limit
	Goodput  float64   `json:"goodput"`  // requests answered below 500, per second
	Errors   float64   `json:"errors"`   // requests answered 5xx or failed, per second
	Shed     float64   `json:"shed"`     // requests shed by its limit or a route's rate limit, per second
	Retries  float64   `json:"retries"`  // retries sent, per second
	P50      float64   `json:"p50"`      // ms
	P99      float64   `json:"p99"`      // ms
	Backends []Backend `json:"backends"`
}

// Backend is one backend of an upstream in a Frame.
type Backend struct {
	Addr     string  `json:"addr"`
	State    string  `json:"state"`    // "healthy", "ejected", "breaker open" or "down"
	Requests float64 `json:"requests"` // attempts sent to it, per second
	Errors   float64 `json:"errors"`   // of which failed or answered 5xx, per second
	InFlight int64   `json:"inflight"`
	P99      float64 `json:"p99"` // ms
}

// A History keeps the last frames published, and sends each new one to
// the pages that watch. The zero History is not usable: call
// [NewHistory]. It is safe for concurrent use.
type History struct {
	mu     sync.Mutex
	frames [][]byte // the frames' JSON, oldest first
	keep   int
	last   *Frame
	subs   map[chan []byte]struct{}
}

// NewHistory returns a History that keeps the last keep frames. It
// panics if keep < 1.
func NewHistory(keep int) *History {
	if keep < 1 {
		panic(fmt.Sprintf("live.NewHistory: keep must be at least 1, got %d", keep))
	}
	return &History{keep: keep, subs: map[chan []byte]struct{}{}}
}

// Publish adds f to the history and sends it to every page watching. A
// page too slow to take it misses it (its channel holds a few frames).
func (h *History) Publish(f *Frame) {
	data, err := json.Marshal(f)
	if err != nil {
		panic("live: a Frame does not marshal: " + err.Error()) // only numbers and strings
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.frames) == h.keep {
		copy(h.frames, h.frames[1:])
		h.frames = h.frames[:h.keep-1]
	}
	h.frames = append(h.frames, data)
	h.last = f
	for ch := range h.subs {
		select {
		case ch <- data:
		default:
		}
	}
}

// Last returns the frame published last, or nil if none was.
func (h *History) Last() *Frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// subscribe returns the frames kept, as one JSON array, and a channel of
// the frames published from now on, until unsubscribe.
func (h *History) subscribe() (past []byte, ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b bytes.Buffer
	b.WriteByte('[')
	for i, f := range h.frames {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(f)
	}
	b.WriteByte(']')
	ch = make(chan []byte, 4)
	h.subs[ch] = struct{}{}
	return b.Bytes(), ch
}

func (h *History) unsubscribe(ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
}

//go:embed static
var static embed.FS

// Handler returns the handler of the live page under prefix, which ends
// with a slash ("/live/"): the page at prefix, its script and style
// beside it, and the events at prefix + "events". Mount it at prefix.
func (h *History) Handler(prefix string) http.Handler {
	if !strings.HasSuffix(prefix, "/") {
		panic("live.History.Handler: prefix " + prefix + " does not end with /")
	}
	files, _ := fs.Sub(static, "static")
	mux := http.NewServeMux()
	mux.Handle("GET "+prefix, http.StripPrefix(prefix, http.FileServerFS(files)))
	mux.HandleFunc("GET "+prefix+"events", h.events)
	return mux
}

// events serves the frames as server-sent events: an event "history"
// with the frames kept, then an event "frame" for each new one, until
// the client goes.
func (h *History) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	past, ch := h.subscribe()
	defer h.unsubscribe(ch)
	if !send(w, rc, "history", past) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case f := <-ch:
			if !send(w, rc, "frame", f) {
				return
			}
		}
	}
}

// send writes one event and flushes it, and reports whether it could.
func send(w http.ResponseWriter, rc *http.ResponseController, event string, data []byte) bool {
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
		return false
	}
	return rc.Flush() == nil
}
