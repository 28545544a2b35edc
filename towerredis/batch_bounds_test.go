package towerredis

// In-package: it checks a batch's unexported stock (due, pop, giveBack, take).

import (
	"context"
	"errors"
	"testing"
	"time"
)

// never is an instant no deadline reaches.
const never = time.Duration(1<<63 - 1)

// boundsStock returns a batch of 5 tokens of a bucket of 5, one every
// 10ms (so kept 50ms), that came in at the instant at, token i due at
// first + i*10ms, token 0 already handed out, as fetch leaves it.
func boundsStock(at, first time.Duration) *stock {
	s := newStock(&gcra{interval: 10 * time.Millisecond, burst: 5}, nil, 5)
	s.at, s.first, s.next, s.n = at, first, 1, 5
	return s
}

// Token i of a batch is due at first + i*interval, and never before the
// batch came in: tokens the bucket held already are due on arrival.
func TestStockDue(t *testing.T) {
	const at = time.Hour // a mono reading
	for _, tt := range []struct {
		what  string
		first time.Duration
		i     int
		want  time.Duration
	}{
		{"a reserved batch: token 0 at its due", at + 20*time.Millisecond, 0, at + 20*time.Millisecond},
		{"a reserved batch: token 3, three intervals later", at + 20*time.Millisecond, 3, at + 50*time.Millisecond},
		{"tokens there already: due on arrival", at - 25*time.Millisecond, 2, at},
		{"tokens there already: the first one due after arrival", at - 25*time.Millisecond, 3, at + 5*time.Millisecond},
	} {
		if got := boundsStock(at, tt.first).due(tt.i); got != tt.want {
			t.Errorf("%s: due(%d) = at+%v, want at+%v", tt.what, tt.i, got-at, tt.want-at)
		}
	}
}

// pop hands out the next token if it is due by the instant by, a token
// due exactly at by included; tokens more than the keep (50ms) past their
// due are skipped, to the first token due at or after now - keep, which a
// token due exactly then is.
func TestStockPopBounds(t *testing.T) {
	const at = time.Hour // a mono reading
	for _, tt := range []struct {
		what     string
		first    time.Duration // token 0's due; token i's is first + i*10ms
		now, by  time.Duration
		want     time.Duration // the token's due instant, if handed out
		ok       bool
		wantNext int // the next token after the call
	}{
		{"token 1, due exactly at by: handed out", at, at, at + 10*time.Millisecond, at + 10*time.Millisecond, true, 2},
		{"token 1, due 1ns after by: kept", at, at, at + 10*time.Millisecond - time.Nanosecond, 0, false, 1},
		{"25ms past the keep of token 0: tokens 1 and 2 lost, token 3 next", at, at + 75*time.Millisecond, never, at + 30*time.Millisecond, true, 4},
		{"1ns before the end of token 3's keep: token 3 next", at, at + 80*time.Millisecond - time.Nanosecond, never, at + 30*time.Millisecond, true, 4},
		{"at the end of token 3's keep: token 3 still next", at, at + 80*time.Millisecond, never, at + 30*time.Millisecond, true, 4},
		{"1ns after it: token 3 lost, token 4 next", at, at + 80*time.Millisecond + time.Nanosecond, never, at + 40*time.Millisecond, true, 5},
		{"past every token's keep: none, the batch spent", at, at + 90*time.Millisecond + time.Nanosecond, never, 0, false, 5},
		{"tokens there already, at the end of token 3's keep: token 3 next", at - 20*time.Millisecond, at + 60*time.Millisecond, never, at + 10*time.Millisecond, true, 4},
		{"tokens there already, at the end of token 1's keep (due on arrival): token 1 next", at - 20*time.Millisecond, at + 50*time.Millisecond, never, at, true, 2},
	} {
		s := boundsStock(at, tt.first)
		got, ok := s.pop(tt.now, tt.by)
		if got != tt.want || ok != tt.ok || s.next != tt.wantNext {
			t.Errorf("%s: pop = at+%v, %v, next token %d; want at+%v, %v, next token %d",
				tt.what, got-at, ok, s.next, tt.want-at, tt.ok, tt.wantNext)
		}
	}
}

// A token given back to the batch goes back only if it is the last one
// handed out of the batch still there and not the batch's first; it is
// then handed out again at its own due instant, and kept as any token of
// the batch is, up to its keep's end. Any other is lost.
func TestStockGiveBack(t *testing.T) {
	const at = time.Hour // a mono reading
	for _, tt := range []struct {
		what     string
		mark     uint64
		now      time.Duration // when the next pop asks
		wantNext int           // the next token after the give-back
		want     time.Duration // what the pop hands out
		ok       bool
	}{
		{"the last handed out: back, due at its own instant", stockMark(1, 2), at + 20*time.Millisecond, 2, at + 20*time.Millisecond, true},
		{"back, and handed out at its keep's end", stockMark(1, 2), at + 70*time.Millisecond, 2, at + 20*time.Millisecond, true},
		{"back, and lost 1ns after its keep's end", stockMark(1, 2), at + 70*time.Millisecond + time.Nanosecond, 2, at + 30*time.Millisecond, true},
		{"an earlier one: lost, a later one holds the next instant", stockMark(1, 1), at + 30*time.Millisecond, 3, at + 30*time.Millisecond, true},
		{"a token of an earlier batch: lost", stockMark(0, 2), at + 30*time.Millisecond, 3, at + 30*time.Millisecond, true},
	} {
		s := boundsStock(at, at)
		s.batch, s.next = 1, 3 // tokens 0, 1 and 2 handed out
		s.giveBack(tt.mark)
		if s.next != tt.wantNext {
			t.Errorf("%s: next token %d after the give-back, want %d", tt.what, s.next, tt.wantNext)
		}
		if got, ok := s.pop(tt.now, never); got != tt.want || ok != tt.ok {
			t.Errorf("%s: pop = at+%v, %v; want at+%v, %v", tt.what, got-at, ok, tt.want-at, tt.ok)
		}
	}
}

// A round trip for a batch that gets no token installs nothing, and its
// caller gets what the bucket's take says: with Redis unreachable, failing
// open, admitted with no token (nothing to give back); failing closed, an
// *UnreachableError, for a done ctx as for any.
func TestStockFetchWithoutToken(t *testing.T) {
	addr := closedPort(t)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tt := range []struct {
		mode        FailMode
		ctx         context.Context
		from        outcome
		unreachable bool
	}{
		{FailOpen, t.Context(), failedOpen, false},
		{FailClosed, t.Context(), 0, true},
		{FailClosed, done, 0, true},
	} {
		rt := &trips{}
		r := NewBucket[string, string](okService, newClient(t, addr), "none", 1, time.Second, 2,
			WithBatch(2), WithFailMode(tt.mode), WithObserver(rt.Observe), WithTimeout(time.Second))
		from, _, err := r.stock.take(tt.ctx, new(watch))
		var ue *UnreachableError
		if from != tt.from || errors.As(err, &ue) != tt.unreachable || (!tt.unreachable && err != nil) {
			t.Errorf("%v: take = %d, %v; want %d, an UnreachableError %t", tt.mode, from, err, tt.from, tt.unreachable)
		}
		if s := r.stock; s.n != 0 || s.next != 0 || s.fetching != nil || rt.Errs.Load() != 1 {
			t.Errorf("%v: batch of %d tokens, next %d, fetching %v after %d failed round trips; want none installed after 1",
				tt.mode, s.n, s.next, s.fetching, rt.Errs.Load())
		}
	}
}
