package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns the path of Debian's Chromium, or skips the test if
// it is not installed; on CI, where .ci/run installs it, its absence
// fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium at /usr/bin/chromium (apt-get install chromium), nor in $CHROMIUM")
	}
	t.Skip("no Chromium at /usr/bin/chromium (apt-get install chromium), nor in $CHROMIUM")
	return ""
}

// browser starts headless Chromium, with a profile of its own and none
// of its calls to the network, and returns a chromedp context of a tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 600),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// poll waits up to d for the JavaScript expression to be truthy, and
// returns its value.
func poll[T any](t *testing.T, ctx context.Context, what, expr string, d time.Duration) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// The live page, in a real browser, during a load: the goodput it shows
// moves, and a backend that starts failing turns ejected. With
// TOWERPROXY_SCREENSHOT=path, the test runs the load longer and saves a
// screenshot of the page there (docs/towerproxy-live.png).
func TestLivePage(t *testing.T) {
	chromium(t)
	var failing atomic.Bool
	handler := func(delay time.Duration, fails bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			if fails && failing.Load() {
				http.Error(w, "failing", http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte("ok"))
		})
	}
	a := httptest.NewServer(handler(3*time.Millisecond, false))
	b := httptest.NewServer(handler(time.Millisecond, true))
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	s := startObserved(t, "access_log: off\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}, {b1}]}\n", []*httptest.Server{a, b})
	ctx := browser(t) // after start: its cleanup, which ends the page's events, comes first

	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				if res, err := http.Get(s.front.URL + "/"); err == nil {
					res.Body.Close()
				}
			}
		})
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(s.admin.URL+"/live/")); err != nil {
		t.Fatal(err)
	}
	const goodput = `document.querySelector('section[data-upstream="web"] [data-metric="goodput"]')`
	first := poll[string](t, ctx, "goodput shown", `(() => { const e = `+goodput+`; return e && parseFloat(e.textContent) > 0 && e.textContent; })()`, 20*time.Second)
	moved := poll[string](t, ctx, "goodput moves", `(() => { const v = `+goodput+`.textContent; return v !== `+strconv.Quote(first)+` && v; })()`, 10*time.Second)
	t.Logf("goodput shown %s, then %s", first, moved)
	state := `document.querySelector('tr[data-backend=` + strconv.Quote(b.URL) + `] .state').textContent`
	if got := poll[string](t, ctx, "backend shown", state, 10*time.Second); got != "healthy" {
		t.Errorf("backend %s shown %q, want healthy", b.URL, got)
	}

	failing.Store(true)
	poll[bool](t, ctx, "backend turns ejected", state+` === "ejected"`, 15*time.Second)

	if path := os.Getenv("TOWERPROXY_SCREENSHOT"); path != "" {
		time.Sleep(20 * time.Second) // the ejection and the recovery, on the charts
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
