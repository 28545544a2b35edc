package towerhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
)

// deadlineWriter is a ResponseWriter whose connection's read deadline can
// be set, as net/http's can: it records the deadlines set.
type deadlineWriter struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (w *deadlineWriter) SetReadDeadline(d time.Time) error {
	w.deadlines = append(w.deadlines, d)
	return nil
}

// A deadline without a monotonic reading, which a middleware before the
// Handler may have set from a date, bounds the reads of the body at the
// same instant as one with a reading: each read of a body that is not
// net/http's own is armed with the deadline, an hour away, and disarmed
// after.
//
// It runs on the real clock, and waits for nothing: in a testing/synctest
// bubble, whose clock starts in 2000, package mono's readings are
// negative, and the Handler takes one for none. The deadline set is an
// hour away to within a second, what the test may take, as the Handler
// reads the clock twice to convert it.
func TestWallClockDeadlineBoundsBody(t *testing.T) {
	h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body: %v", err)
		}
		w.Write(b)
	}), tower.Stack[*http.Request, towerhttp.Response]())
	r := httptest.NewRequest("POST", "/", strings.NewReader("abc"))
	ctx, cancel := context.WithDeadline(r.Context(), time.Now().Add(time.Hour).Round(0))
	defer cancel()
	w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, r.WithContext(ctx))
	if w.Code != 200 || w.Body.String() != "abc" {
		t.Errorf("got %d %q, want 200 %q", w.Code, w.Body.String(), "abc")
	}
	// Two reads: "abc", then the end of the body.
	if len(w.deadlines) != 4 {
		t.Fatalf("got %d deadlines set, want 4: %v", len(w.deadlines), w.deadlines)
	}
	for i, d := range w.deadlines {
		if i%2 == 1 {
			if !d.IsZero() {
				t.Errorf("deadline %d: got %v, want it cleared", i, d)
			}
		} else if got := time.Until(d); got <= time.Hour-time.Second || got > time.Hour {
			t.Errorf("deadline %d: got %v away, want an hour", i, got)
		}
	}
}
