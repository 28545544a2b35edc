package towerhttp_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// stubborn is a handler that takes 500ms whatever its context says, and
// counts the handlers running at once.
type stubborn struct {
	running, most atomic.Int32
}

func (s *stubborn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.running.Add(1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(500 * time.Millisecond) // ignores its context
	s.running.Add(-1)
	w.Write([]byte("done"))
}

// LoadShed > Timeout(50ms) > ConcurrencyLimit(10), the stack the package
// doc recommends, over handlers that ignore their context, under a burst
// of 100 requests, one every 5ms: in either Timeout mode, never more than
// 10 handlers run at once, and the 90 the limit cannot take are shed at
// once. The Timeout sits above the limit, so a call the Timeout abandons
// keeps the limit's permit until its handler returns: the limit counts
// what really runs. (Below it, a limit would take its permit back when
// the Timeout answers, at 50ms, and let in a request every 5ms from then
// on, while the abandoned handlers still run.) In Cooperative mode the
// handlers' late responses stand; in Abandon mode the Timeout answers 503
// at 50ms. At 500ms, when the first handler returns, its permit is back.
func TestRecommendedStackBoundsHandlersThatIgnoreTheirContext(t *testing.T) {
	for _, tt := range []struct {
		mode     timeout.Mode
		admitted int
		body     string
		at       time.Duration
	}{
		{timeout.Cooperative, 200, "done", 500 * time.Millisecond},
		{timeout.Abandon, 503, "request timed out\n", 50 * time.Millisecond},
	} {
		t.Run(tt.mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &stubborn{}
				h := towerhttp.NewHandler(s, tower.Stack(
					loadshed.NewLayer[*http.Request, towerhttp.Response](),
					timeout.NewLayer[*http.Request, towerhttp.Response](50*time.Millisecond, timeout.WithMode(tt.mode)),
					limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](10),
				))
				start := time.Now()
				const every = 5 * time.Millisecond
				var burst []*served
				for i := range 100 {
					time.Sleep(time.Duration(i)*every - time.Since(start))
					burst = append(burst, serve(h, httptest.NewRequest("GET", "/", nil), start))
				}
				for i, s := range burst {
					want, body, at := http.StatusServiceUnavailable, "service overloaded\n", time.Duration(i)*every
					if i < 10 {
						want, body, at = tt.admitted, tt.body, at+tt.at
					}
					s.expect(t, want, body)
					if s.at != at {
						t.Errorf("request %d answered at %v, want %v", i, s.at, at)
					}
				}
				time.Sleep(500*time.Millisecond - time.Since(start))
				synctest.Wait()
				if most := s.most.Load(); most != 10 {
					t.Errorf("got at most %d handlers at once, want 10", most)
				}
				sent := time.Since(start)
				next := serve(h, httptest.NewRequest("GET", "/", nil), start)
				next.expect(t, tt.admitted, tt.body)
				if want := sent + tt.at; next.at != want {
					t.Errorf("a request at %v was answered at %v, want %v: admitted, not shed", sent, next.at, want)
				}
				time.Sleep(sent + 500*time.Millisecond - time.Since(start)) // every handler returns
				synctest.Wait()
			})
		})
	}
}
