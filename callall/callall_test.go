package callall_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/callall"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

type svc = tower.Service[string, string]

// variant is one of the four entry points, over a channel: the iterator
// variants read it through an iterator that blocks as the channel does.
type variant struct {
	name    string
	ordered bool
	all     func(ctx context.Context, s svc, reqs chan string, limit int) iter.Seq2[string, error]
}

var variants = []variant{
	{"Ordered", true, func(ctx context.Context, s svc, reqs chan string, limit int) iter.Seq2[string, error] {
		return callall.Ordered(ctx, s, chanSeq(reqs), limit)
	}},
	{"Unordered", false, func(ctx context.Context, s svc, reqs chan string, limit int) iter.Seq2[string, error] {
		return callall.Unordered(ctx, s, chanSeq(reqs), limit)
	}},
	{"OrderedChan", true, func(ctx context.Context, s svc, reqs chan string, limit int) iter.Seq2[string, error] {
		return callall.OrderedChan(ctx, s, reqs, limit)
	}},
	{"UnorderedChan", false, func(ctx context.Context, s svc, reqs chan string, limit int) iter.Seq2[string, error] {
		return callall.UnorderedChan(ctx, s, reqs, limit)
	}},
}

// chanSeq is an iterator over the requests received from reqs; it does
// not watch any ctx.
func chanSeq(reqs chan string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for req := range reqs {
			if !yield(req) {
				return
			}
		}
	}
}

// forEach runs f for each variant, in its own synctest bubble.
func forEach(t *testing.T, f func(t *testing.T, v variant)) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { f(t, v) })
		})
	}
}

// tower: ordered. The service is ready only when admitted, one readiness
// per admission; requests come through a channel. Nothing is yielded
// before a request is admitted and answered, and an admission made while
// no request waits is used by the next one.
func TestOrdered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		reqs := make(chan string, 10)
		start := time.Now()
		c := collect(callall.OrderedChan[string, string](t.Context(), mock, reqs, 4), start)
		c.none(t)

		reqs <- "one"
		c.none(t)
		h.Allow(1)
		h.ExpectSettled(t, "one").Respond("one")
		c.expect(t, "one", 0)
		c.none(t)

		h.Allow(1)
		reqs <- "two"
		reqs <- "three"
		h.ExpectSettled(t, "two").Respond("two")
		c.expect(t, "two", 0)
		c.none(t)
		h.ExpectNone(t) // three is not admitted

		h.Allow(1)
		h.ExpectSettled(t, "three").Respond("three")
		c.expect(t, "three", 0)

		h.Allow(1)
		c.none(t)
		reqs <- "four"
		h.ExpectSettled(t, "four").Respond("four")
		c.expect(t, "four", 0)
		c.none(t)

		h.Allow(1)
		close(reqs)
		c.ended(t, 0)
		if n := h.Calls(); n != 4 {
			t.Errorf("got %d calls, want 4", n)
		}
	})
}

// tower: unordered. Two requests are in flight together; the second
// answered first is yielded first.
func TestUnordered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		start := time.Now()
		c := collect(callall.Unordered[string, string](t.Context(), mock, slices.Values([]string{"one", "two"}), 2), start)
		c.none(t)
		got := received(t, h, 2)
		time.Sleep(10 * time.Millisecond)
		got["two"].Respond("resp 1")
		c.expect(t, "resp 1", 10*time.Millisecond)
		c.none(t)
		time.Sleep(10 * time.Millisecond)
		got["one"].Respond("resp 2")
		c.expect(t, "resp 2", 20*time.Millisecond)
		c.ended(t, 20*time.Millisecond)
	})
}

// Answered in reverse, the responses still come in request order: each
// waits for the ones before it.
func TestOrderedWaitsForEarlierResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		start := time.Now()
		c := collect(callall.Ordered[string, string](t.Context(), mock, slices.Values([]string{"a", "b", "c"}), 3), start)
		got := received(t, h, 3)
		for _, req := range []string{"c", "b", "a"} {
			time.Sleep(10 * time.Millisecond)
			got[req].Respond(req + "!")
		}
		c.expect(t, "a!", 30*time.Millisecond)
		c.expect(t, "b!", 30*time.Millisecond)
		c.expect(t, "c!", 30*time.Millisecond)
		c.ended(t, 30*time.Millisecond)
	})
}

// tower: pending. A request that has not been answered yields nothing;
// its answer is yielded; then the sequence waits for more requests.
func TestPending(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		reqs := make(chan string, 1)
		start := time.Now()
		c := collect(v.all(t.Context(), mock, reqs, 1), start)
		c.none(t)
		reqs <- "req"
		c.none(t)
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "req").Respond("res")
		c.expect(t, "res", 10*time.Millisecond)
		c.none(t)
		close(reqs)
		c.ended(t, 10*time.Millisecond)
	})
}

var errPollReady = errors.New("poll_ready error")

// tower: poll_ready_error. The service is ready once, then its Ready
// fails: the error is yielded once and at once, then the response of the
// request already sent, and the sequence ends. The request in hand and the
// one after it are never sent.
func TestReadyError(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(1)
		reqs := make(chan string, 3)
		for _, r := range []string{"req0", "req1", "req2"} {
			reqs <- r
		}
		start := time.Now()
		c := collect(v.all(t.Context(), mock, reqs, 4), start)
		time.Sleep(10 * time.Millisecond)
		h.FailReady(errPollReady)
		c.expectErr(t, errPollReady, 10*time.Millisecond)
		c.none(t)
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "req0").Respond("res0")
		c.expect(t, "res0", 20*time.Millisecond)
		c.ended(t, 20*time.Millisecond)
		if n := h.Calls(); n != 1 {
			t.Errorf("got %d calls, want 1", n)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("service has %d reservations outstanding, want 0", n)
		}
	})
}

// tower: stream_does_not_block_service. Over Buffer(1) > ConcurrencyLimit(1),
// a call-all whose requests never come holds neither the buffer's slot nor
// the limit's permit: another caller's request goes through.
func TestStreamDoesNotBlockService(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		buf := buffer.New(limit.NewConcurrency[string, string](mock, 1), 1)
		defer buf.Close()
		never := make(chan string)
		c := collect(v.all(t.Context(), buf, never, 1), time.Now())
		c.none(t)

		call := towertest.Go(func() (string, error) { return tower.Call[string, string](t.Context(), buf, "req") })
		h.ExpectSettled(t, "req").Respond("res")
		if res, err := call.Wait(); res != "res" || err != nil {
			t.Errorf("the other caller got %q, %v; want %q, nil", res, err, "res")
		}
		close(never)
		c.ended(t, 0)
	})
}

// An error in a response is an item; the sequence goes on.
func TestResponseErrorIsAnItem(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		reqs := make(chan string, 2)
		reqs <- "a"
		reqs <- "b"
		close(reqs)
		c := collect(v.all(t.Context(), mock, reqs, 1), time.Now())
		failure := errors.New("no such key")
		h.ExpectSettled(t, "a").Fail(failure)
		c.expectErr(t, failure, 0)
		h.ExpectSettled(t, "b").Respond("B")
		c.expect(t, "B", 0)
		c.ended(t, 0)
	})
}

// At most limit requests are out, counting until the loop body is done
// with the response; a request waiting for its turn holds no reservation
// of the service's.
func TestLimit(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		reqs := make(chan string, 4)
		for _, r := range []string{"a", "b", "c", "d"} {
			reqs <- r
		}
		close(reqs)
		// The loop body works on a response until the test takes it.
		items := make(chan string)
		go func() {
			defer close(items)
			for res := range v.all(t.Context(), mock, reqs, 2) {
				items <- res
			}
		}()
		got := received(t, h, 2)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("service has %d reservations outstanding while c waits for its turn, want 0", n)
		}
		if n := len(reqs); n != 2 {
			t.Errorf("%d requests left in the channel, want 2: c is taken before its turn", n)
		}
		got["a"].Respond("A")
		got["b"].Respond("B")
		h.ExpectNone(t) // both answered, neither done with by the loop body
		first := <-items
		received(t, h, 1)["c"].Respond("C")
		second := <-items
		if v.ordered && (first != "A" || second != "B") {
			t.Errorf("got %q, %q; want %q, %q", first, second, "A", "B")
		}
		received(t, h, 1)["d"].Respond("D")
		var rest []string
		for res := range items {
			rest = append(rest, res)
		}
		if len(rest) != 2 {
			t.Errorf("got %d more responses, want 2", len(rest))
		}
	})
}

// Breaking out of the loop cancels the calls in flight and waits for them
// before the loop ends. With the limit reached, the next request is not
// taken: it stays in the channel, with the ones after it.
func TestBreakCancelsCallsInFlight(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		reqs := make(chan string, 5)
		for _, r := range []string{"a", "b", "c", "d", "e"} {
			reqs <- r
		}
		loop := towertest.Go(func() (first string, _ error) {
			for res := range v.all(t.Context(), mock, reqs, 3) {
				first = res
				break
			}
			return first, nil
		})
		got := received(t, h, 3)
		got["a"].Respond("A")
		if first, _ := loop.Wait(); first != "A" {
			t.Errorf("got %q, want %q", first, "A")
		}
		for _, req := range []string{"b", "c"} {
			if err := got[req].Context().Err(); err != context.Canceled {
				t.Errorf("request %q: ctx got %v after the loop ended, want %v", req, err, context.Canceled)
			}
		}
		if n := len(reqs); n != 2 {
			t.Errorf("%d requests left in the channel, want 2", n)
		}
		if n := h.Calls(); n != 3 {
			t.Errorf("got %d calls, want 3", n)
		}
	})
}

// When ctx ends, no more requests are taken: ctx's error is yielded,
// and the calls in flight end with theirs. An iterator that does not
// watch ctx holds up the end until it yields again.
func TestContextEnds(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		mock, h := towertest.NewMock[string, string]()
		reqs := make(chan string, 2)
		reqs <- "a"
		reqs <- "b"
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		c := collect(v.all(ctx, mock, reqs, 3), start)
		received(t, h, 2)
		time.Sleep(50 * time.Millisecond)
		if v.name == "Ordered" || v.name == "Unordered" {
			c.expectErr(t, context.DeadlineExceeded, 50*time.Millisecond)
			c.expectErr(t, context.DeadlineExceeded, 50*time.Millisecond)
			c.none(t)
			close(reqs)
			c.expectErr(t, context.DeadlineExceeded, 50*time.Millisecond)
		} else {
			for range 3 {
				c.expectErr(t, context.DeadlineExceeded, 50*time.Millisecond)
			}
		}
		c.ended(t, 50*time.Millisecond)
	})
}

func TestBadInput(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	reqs := slices.Values([]string{"a"})
	ch := make(chan string)
	ctx := context.Background()
	var typedNil *towertest.Mock[string, string] // a nil pointer in the interface
	tests := []struct {
		name, want string
		f          func()
	}{
		{"OrderedLimit0", "callall.Ordered: limit must be at least 1, got 0", func() { callall.Ordered[string, string](ctx, mock, reqs, 0) }},
		{"UnorderedNilService", "callall.Unordered: svc is nil", func() { callall.Unordered[string, string](ctx, nil, reqs, 1) }},
		{"OrderedChanTypedNilService", "callall.OrderedChan: svc is nil", func() { callall.OrderedChan[string, string](ctx, typedNil, ch, 1) }},
		{"OrderedNilSeq", "callall.Ordered: reqs is nil", func() { callall.Ordered[string, string](ctx, mock, nil, 1) }},
		{"OrderedChanNilChan", "callall.OrderedChan: reqs is nil", func() { callall.OrderedChan[string, string](ctx, mock, nil, 1) }},
		{"UnorderedChanLimitNegative", "callall.UnorderedChan: limit must be at least 1, got -1", func() { callall.UnorderedChan[string, string](ctx, mock, ch, -1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}
