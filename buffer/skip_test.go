package buffer_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// A call may skip the queue only when no request is queued or in its turn:
// one that arrives as the inner service becomes ready for the request in
// turn must queue behind it.
func TestQueuedRequestIsNotOvertaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 4)
		h.Allow(0)
		first := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "first")
		h.ExpectNoneSettled(t)
		// Ready for one request, and a second caller arrives at once,
		// before the first request has taken the permit.
		h.Allow(1)
		second := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "second")
		h.ExpectSettled(t, "first").Respond("one")
		first.ExpectValue(t, "one")
		h.ExpectNoneSettled(t)
		h.Allow(1)
		h.ExpectSettled(t, "second").Respond("two")
		second.ExpectValue(t, "two")
	})
}

// With nothing queued and the inner service ready, a call goes straight
// through; the next call that must wait still queues and is served in
// order.
func TestSkipsQueueWhenNothingWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 1)
		h.Allow(1)
		direct := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "direct")
		h.ExpectSettled(t, "direct").Respond("ok")
		direct.ExpectValue(t, "ok")
		queued := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "queued")
		h.ExpectNoneSettled(t)
		h.Allow(1)
		h.ExpectSettled(t, "queued").Respond("ok")
		queued.ExpectValue(t, "ok")
	})
}

// Many callers, some of which give up at random moments, over an inner
// service with one permit whose calls take random times: every caller gets
// an answer or its own context's error, and nothing stays reserved, neither
// the inner service's permit nor a slot, whatever the interleaving of late
// answers and reused permit records.
func TestStressNothingLeaks(t *testing.T) {
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			sem := limit.NewSemaphore(1)
			inner := limit.NewConcurrencyWith(tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
				select {
				case <-time.After(time.Duration(req%7) * time.Millisecond):
					return req, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}), sem)
			const bound = 4
			b := buffer.New[int, int](inner, bound)
			defer b.Close()
			var wg sync.WaitGroup
			for i := range 200 {
				patience := time.Duration(rng.IntN(20)) * time.Millisecond
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(t.Context(), patience)
					defer cancel()
					res, err := tower.Call(ctx, tower.Service[int, int](b), i)
					switch {
					case err == nil && res != i:
						t.Errorf("request %d got response %d", i, res)
					case err != nil && err != context.DeadlineExceeded:
						t.Errorf("request %d: got error %v, want a response or %v", i, err, context.DeadlineExceeded)
					}
				})
			}
			wg.Wait()
			synctest.Wait()
			if n := sem.Available(); n != 1 {
				t.Errorf("seed %d: the inner service's permit is still taken (%d free, want 1)", seed, n)
			}
			// Every slot is free again: bound reservations at once, without
			// waiting.
			var held []tower.Permit[int, int]
			for range bound {
				p, ok, err := tower.ReadyNow(tower.Service[int, int](b))
				if !ok || err != nil {
					t.Fatalf("seed %d: only %d of %d slots are free", seed, len(held), bound)
				}
				held = append(held, p)
			}
			for i := range held {
				held[i].Release()
			}
		})
	}
}

// staleDeadline is a context whose deadline has passed although its Err
// is still nil: what a caller's context looks like at the instant its
// deadline passes, before its timer has fired.
type staleDeadline struct{ context.Context }

func (staleDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Nanosecond), true }

// With nothing queued and the inner service ready, a call skips the
// queue and does what it would do in its turn at once; a request whose
// caller has given up leaves the queue, so must the call: the inner
// service is not asked and gets no request, the caller gets its ctx's
// error, and the slot comes back. Before the fix the request reached the
// inner service.
func TestSkipPathSkipsGoneCaller(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"Canceled", canceled, context.Canceled},
		{"DeadlineExceeded", expired, context.DeadlineExceeded},
		{"DeadlinePassedNotYetNoticed", staleDeadline{context.Background()}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				spy := &readySpy{svc: m}
				b := buffer.New[string, string](spy, 2)
				defer b.Close()
				p, ok, _ := tower.ReadyNow(svc(b)) // a slot, whatever ctx
				if !ok {
					t.Fatal("no slot free in a new Buffer")
				}
				if _, err := p.Call(tt.ctx, "gone"); err != tt.want {
					t.Errorf("got error %v, want %v", err, tt.want)
				}
				synctest.Wait()
				spy.mu.Lock()
				asked := len(spy.seen)
				spy.mu.Unlock()
				if n, o := h.Calls(), h.Outstanding(); n != 0 || o != 0 || asked != 0 {
					t.Errorf("the inner service was asked %d times, got %d calls and holds %d reservations; want 0, 0, 0", asked, n, o)
				}
				wantFree(t, b, 2)
				call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "next")
				h.ExpectSettled(t, "next").Respond("ok")
				call.ExpectValue(t, "ok")
			})
		})
	}
}
