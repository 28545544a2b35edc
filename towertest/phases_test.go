package towertest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// GoReady returns once Ready has blocked; the permit comes when the mock
// grants it, and GoCall's call reaches the mock before GoCall returns.
func TestGoReadyAndGoCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), mock)
		rd.ExpectPending(t)
		time.Sleep(20 * time.Millisecond)
		h.Allow(1)
		p := rd.Value(t)
		rd.ExpectElapsed(t, 20*time.Millisecond)

		call := towertest.GoCall(t.Context(), p, "hello")
		h.ExpectNow(t, "hello").Respond("world") // there without a wait
		call.ExpectValue(t, "world")
	})
}

// Callers started one after another with GoRequest reach the mock in that
// order, and each gets its own answer.
func TestGoRequestKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
			return tower.Call(ctx, mock, req) // a goroutine hop that could reorder callers
		})
		var calls []*towertest.Outcome[string]
		for _, req := range []string{"a", "b", "c"} {
			calls = append(calls, towertest.GoRequest(t.Context(), svc, req))
		}
		for _, req := range []string{"a", "b", "c"} {
			h.ExpectNow(t, req).Respond(req + "!")
		}
		for i, req := range []string{"a", "b", "c"} {
			calls[i].ExpectValue(t, req+"!")
		}
	})
}

// GoReady returns the error of a Ready that fails, and the context's of
// one that gives up.
func TestGoReadyErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		rd := towertest.GoReady(ctx, mock)
		rd.ExpectError(t, context.DeadlineExceeded)
		rd.ExpectElapsed(t, 30*time.Millisecond)

		broken := errors.New("broken")
		h.FailReady(broken)
		towertest.GoReady(t.Context(), mock).ExpectError(t, broken)
	})
}

func TestMustReady(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	p := towertest.MustReady(t, mock)
	if !p.Held() || h.Outstanding() != 1 {
		t.Errorf("MustReady returned a permit held %t, with %d outstanding; want a held one, 1 outstanding", p.Held(), h.Outstanding())
	}
	p.Release()

	h.Close()
	got := failures(t, func(tb testing.TB) {
		towertest.MustReady(tb, mock)
		tb.Errorf("MustReady went on after the error")
	})
	if want := []string{"Ready: got error service closed, want a permit"}; !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
}

func TestReadyNow(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	p, ok := towertest.ReadyNow(t, mock)
	if !ok || !p.Held() {
		t.Errorf("ReadyNow of a ready mock: got held %t, %t; want a permit, true", p.Held(), ok)
	}
	p.Release()

	h.Allow(0)
	if p, ok := towertest.ReadyNow(t, mock); ok || p.Held() {
		t.Errorf("ReadyNow of a mock that is not ready: got held %t, %t; want none, false", p.Held(), ok)
	}

	h.Close()
	got := failures(t, func(tb testing.TB) {
		towertest.ReadyNow(tb, mock)
		tb.Errorf("ReadyNow went on after the error")
	})
	if want := []string{"ReadyNow: got error service closed, want none"}; !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
}

func TestCallThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		towertest.CallThrough(t, towertest.MustReady(t, mock), h, "hello", "world")
		h.ExpectIdle(t, 1)

		// A stack that changes the request fails the check, which takes the
		// request it did not expect.
		svc := tower.MapRequest(mock, strings.ToUpper)
		p := towertest.MustReady(t, svc)
		got := failures(t, func(tb testing.TB) { towertest.CallThrough(tb, p, h, "hello", "world") })
		if want := []string{"got request HELLO, want hello"}; !slices.Equal(got, want) {
			t.Errorf("reported %q, want %q", got, want)
		}
		h.ExpectIdle(t, 2)
	})
}
