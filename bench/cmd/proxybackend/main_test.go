package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A backend of 4 workers serves 4 requests at once and queues the rest;
// halved, it serves 2 at once once its workers in use are done.
func TestWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(0, 10*time.Millisecond, 4, 0)
		// served returns how long 8 requests at once take, all answered.
		served := func() time.Duration {
			start := time.Now()
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					w := httptest.NewRecorder()
					b.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
					if w.Code != http.StatusOK || w.Header().Get("X-Backend") != "0" {
						t.Errorf("got %d, X-Backend %q, want 200, 0", w.Code, w.Header().Get("X-Backend"))
					}
				})
			}
			wg.Wait()
			return time.Since(start)
		}
		if got := served(); got != 20*time.Millisecond {
			t.Errorf("4 workers: 8 requests took %v, want 20ms", got)
		}
		w := httptest.NewRecorder()
		b.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/_ctl?workers=2", nil))
		if !strings.Contains(w.Body.String(), "workers=2") {
			t.Errorf("/_ctl: got %q, want workers=2", w.Body.String())
		}
		synctest.Wait() // the tokens taken back
		if got := served(); got != 40*time.Millisecond {
			t.Errorf("2 workers: 8 requests took %v, want 40ms", got)
		}
		b.resize(0)
		if got := served(); got != 10*time.Millisecond {
			t.Errorf("no bound: 8 requests took %v, want 10ms", got)
		}
	})
}

// A backend that fails answers 503 at once, every time at a share of 1.
func TestFail(t *testing.T) {
	b := newBackend(3, time.Hour, 1, 1)
	w := httptest.NewRecorder()
	b.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("X-Backend") != "3" {
		t.Errorf("got %d, X-Backend %q, want 503, 3", w.Code, w.Header().Get("X-Backend"))
	}
}
