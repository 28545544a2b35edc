package buffer_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

// wantTrace fails t unless rec recorded want.
func wantTrace(t *testing.T, rec *towertest.TraceRecorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got trace\n%q\nwant\n%q", got, want)
	}
}

// A request that queues for 30ms, until the inner service is ready, is
// reported as a queue wait of exactly 30ms; one that finds the inner
// service ready and nothing queued skips the queue and reports nothing.
func TestTraceQueueWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		ctx := metrics.WithTracer(t.Context(), rec)
		b, h := newBuffer(t, 2)
		h.Allow(0)
		call := towertest.GoRequest(ctx, b, "queued")
		time.Sleep(30 * ms)
		h.Allow(1)
		h.ExpectSettled(t, "queued").Respond("ok")
		call.ExpectValue(t, "ok")
		wantTrace(t, rec, "queue wait 0s..30ms")

		h.AllowAll()
		call = towertest.GoRequest(ctx, b, "skips")
		h.ExpectSettled(t, "skips").Respond("ok")
		call.ExpectValue(t, "ok")
		wantTrace(t, rec, "queue wait 0s..30ms")
	})
}

// A request queued behind another waits for its turn, then for the inner
// service: its queue wait is both. One whose caller gives up leaves the
// queue with its context's error.
func TestTraceQueueWaitInTurnAndGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second := towertest.NewTraceRecorder(), towertest.NewTraceRecorder()
		b, h := newBuffer(t, 4)
		h.Allow(0)
		call1 := towertest.GoRequest(metrics.WithTracer(t.Context(), first), b, "first")
		time.Sleep(10 * ms)
		call2 := towertest.GoRequest(metrics.WithTracer(t.Context(), second), b, "second")
		gaveUp, cancel := context.WithTimeout(metrics.WithTracer(t.Context(), second), 5*ms)
		defer cancel()
		call3 := towertest.GoRequest(gaveUp, b, "gives up")
		time.Sleep(20 * ms)
		h.Allow(1)
		h.ExpectSettled(t, "first").Respond("1")
		call1.ExpectValue(t, "1")
		time.Sleep(5 * ms)
		h.Allow(1)
		h.ExpectSettled(t, "second").Respond("2")
		call2.ExpectValue(t, "2")
		call3.ExpectError(t, context.DeadlineExceeded)
		wantTrace(t, first, "queue wait 0s..30ms")
		wantTrace(t, second, "queue wait 10ms..15ms err=context deadline exceeded", "queue wait 10ms..35ms")
	})
}

// panickyTracer panics with v in Waited.
type panickyTracer struct {
	towertest.TraceRecorder
	v any
}

func (p *panickyTracer) Waited(context.Context, metrics.Wait) { panic(p.v) }

// A Tracer that panics as a request leaves the queue with the inner
// permit: the panic goes on up to the caller, the permit is released and
// the slot is back; the Buffer serves on.
func TestTracerPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := errors.New("tracer's bug")
		ctx := metrics.WithTracer(t.Context(), &panickyTracer{v: v})
		b, h := newBuffer(t, 1)
		h.Allow(0)
		o := towertest.Go(func() (string, error) {
			if _, p, _ := callRecovering(ctx, b, "hello"); p != any(v) {
				t.Errorf("the caller's goroutine panicked with %v, want %v", p, v)
			}
			return "", nil
		})
		synctest.Wait()
		h.Allow(1)
		o.Wait()
		h.ExpectIdle(t, 0)
		if n := buffer.SlotsFree(b); n != 1 {
			t.Errorf("%d of 1 slots free, want 1", n)
		}
		towertest.CallThrough(t, towertest.MustReady(t, b), h, "next", "ok")
	})
}

// A request that skips the queue does not look for a Tracer, and
// allocates nothing, with a Tracer in its context as without.
func TestTraceSkipDoesNotAllocate(t *testing.T) {
	b := buffer.New(echo, 1)
	defer b.Close()
	ctx := metrics.WithTracer(t.Context(), towertest.NewTraceRecorder())
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tower.Call[int, int](ctx, b, 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}
