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
)

// A call may skip the queue only when nothing is queued or in the worker's
// hand: one that arrives as the inner service becomes ready for the request
// in hand must queue behind it.
func TestQueuedRequestIsNotOvertaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 4)
		h.Allow(0)
		first := goCall(t.Context(), mustReady(t, b), "first")
		nothingNext(t, h)
		// Ready for one request, and a second caller arrives at once,
		// before the worker has handed the permit over.
		h.Allow(1)
		second := goCall(t.Context(), mustReady(t, b), "second")
		next(t, h, "first").Respond("one")
		wantResult(t, first, "one")
		nothingNext(t, h)
		h.Allow(1)
		next(t, h, "second").Respond("two")
		wantResult(t, second, "two")
	})
}

// With nothing queued and the inner service ready, a call goes straight
// through; the next call that must wait still queues and is served in
// order.
func TestSkipsQueueWhenNothingWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 1)
		h.Allow(1)
		direct := goCall(t.Context(), mustReady(t, b), "direct")
		next(t, h, "direct").Respond("ok")
		wantResult(t, direct, "ok")
		queued := goCall(t.Context(), mustReady(t, b), "queued")
		nothingNext(t, h)
		h.Allow(1)
		next(t, h, "queued").Respond("ok")
		wantResult(t, queued, "ok")
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
			synctest.Wait() // the worker settles
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
