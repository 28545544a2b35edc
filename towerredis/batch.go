package towerredis

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/towergo/tower/towerredis/internal/mono"
)

// stock is a replica's batch of tokens, for [WithBatch]: the tokens of
// one grant, token i due at first + i*interval, handed out in order. One
// caller at a time fetches the next batch, outside mu; the others wait.
type stock struct {
	b    *gcra
	keys []string
	size int           // tokens asked per round trip
	keep time.Duration // how long after its due a token may still be spent: the bucket's span

	mu       sync.Mutex
	batch    uint32        // counts the batches installed
	at       time.Duration // when the batch came in, a mono reading
	first    time.Duration // due instant of token 0 on the script's schedule
	next, n  int           // next token to hand out, tokens in the batch
	tat      int64         // the tat the batch's take answered, to give it all back
	fetching *fetch        // the round trip for the next batch, if one is under way
}

// stockMark is a token's mark: its batch's number and its own, to give it back.
func stockMark(batch uint32, i int) uint64 { return uint64(batch)<<32 | uint64(i) }

// fetch is a round trip for the next batch, which the replica's other
// callers wait for. Its fields are set before done is closed: if Redis did
// not answer, to failedOpen or an *UnreachableError, for them to return too.
type fetch struct {
	done chan struct{}
	from outcome
	err  error
}

func newStock(b *gcra, keys []string, size int) *stock {
	return &stock{b: b, keys: keys, size: size, keep: time.Duration(b.burst) * b.interval}
}

// take hands out a token of the batch, fetching the next batch when this
// one is spent, and sleeps until the token is due. It returns where the
// token came from and its mark. A done ctx gets a token due now, from the
// batch or from Redis, or ctx.Err().
func (s *stock) take(ctx context.Context, w *watch) (outcome, uint64, error) {
	for {
		probe := ctx.Err() != nil
		s.mu.Lock()
		now := mono.Now()
		due, ok := s.pop(now, s.by(ctx, now, probe))
		if ok {
			m := stockMark(s.batch, s.next-1)
			s.mu.Unlock()
			// If ctx ends first, the token is lost, on the side of the limit.
			if !sleepUntil(ctx, due, w, s.b.o.sink, func() { s.giveBack(m) }) {
				return 0, 0, ctx.Err()
			}
			return fromStock, m, nil
		}
		if s.fetching == nil && s.next >= s.n {
			return s.fetch(ctx, w) // a probe's too: it asks with no wait
		}
		if probe {
			s.mu.Unlock()
			g, from, err := s.b.take(ctx, s.keys, 1, w)
			return from, uint64(g.tat), err
		}
		if f := s.fetching; f != nil {
			s.mu.Unlock()
			w.start(s.b.o.sink, nothing)
			select {
			case <-f.done:
				if f.from == failedOpen || f.err != nil {
					return f.from, 0, f.err
				}
				continue
			case <-ctx.Done():
				return 0, 0, ctx.Err()
			}
		}
		// The next token is due after ctx's deadline: wait for the end.
		s.mu.Unlock()
		w.start(s.b.o.sink, nothing)
		<-ctx.Done()
		return 0, 0, ctx.Err()
	}
}

// by is the latest instant at which a token is any use to a caller with
// ctx: now for a probe, ctx's deadline, or never.
func (s *stock) by(ctx context.Context, now time.Duration, probe bool) time.Duration {
	if probe {
		return now
	}
	if d, ok := ctx.Deadline(); ok {
		if at, ok := mono.Of(d); ok {
			return at
		}
		return now + time.Until(d)
	}
	return math.MaxInt64
}

// pop takes the next token of the batch, and returns its due instant, if
// it is due by the instant by. Tokens past their keep are lost. s.mu must
// be held.
func (s *stock) pop(now, by time.Duration) (time.Duration, bool) {
	if s.next < s.n && s.due(s.next)+s.keep < now { // skip to the first due at or after now - keep
		iv := s.b.interval
		s.next = int((now - s.keep - s.first + iv - 1) / iv)
	}
	if s.next >= s.n {
		return 0, false
	}
	due := s.due(s.next)
	if due > by {
		return 0, false
	}
	s.next++
	return due, true
}

// due is the instant token i of the batch is due: the script's schedule,
// but never before the batch came in (tokens the bucket held already).
func (s *stock) due(i int) time.Duration {
	return max(s.at, s.first+time.Duration(i)*s.b.interval)
}

// fetch asks Redis for the next batch, installs it and takes its first
// token. It is called with s.mu held, and releases it.
func (s *stock) fetch(ctx context.Context, w *watch) (outcome, uint64, error) {
	f := &fetch{done: make(chan struct{})}
	s.fetching = f
	batch := s.batch + 1 // this one's number: only one fetch at a time
	s.mu.Unlock()
	var (
		g    grant
		from outcome
		err  error
	)
	defer func() { // even if the observer or the sink panicked
		s.mu.Lock()
		if from == fromRedis {
			s.batch, s.at, s.first, s.next, s.n, s.tat = batch, g.at, g.due, 1, g.n, g.tat
		}
		if _, ok := err.(*UnreachableError); ok || from == failedOpen {
			f.from, f.err = from, err
		}
		s.fetching = nil
		s.mu.Unlock()
		close(f.done)
	}()
	g, from, err = s.b.take(ctx, s.keys, s.size, w)
	if err != nil || from != fromRedis {
		return from, 0, err
	}
	// If the sink panics as the wait begins, the batch goes back to Redis.
	if !sleepUntil(ctx, g.due, w, s.b.o.sink, func() {
		from = 0
		s.b.giveBack(s.keys, g.n, g.tat)
	}) {
		return 0, 0, ctx.Err()
	}
	return fromStock, stockMark(batch, 0), nil
}

// giveBack returns the token of mark m, released unused, to the batch if
// it is the last one handed out of the current batch; any other is lost,
// since a later token holds the instant after it. Token 0 instead sends
// the whole batch back to Redis, so that the replica never holds more than
// n-1 of a batch's tokens unused.
func (s *stock) giveBack(m uint64) {
	s.mu.Lock()
	batch, i := uint32(m>>32), int(uint32(m))
	if batch != s.batch || i != s.next-1 {
		s.mu.Unlock()
		return
	}
	if i > 0 {
		s.next = i
		s.mu.Unlock()
		return
	}
	n, tat := s.n, s.tat
	s.next, s.n = 0, 0 // spent: the next caller fetches
	s.mu.Unlock()
	s.b.giveBack(s.keys, n, tat)
}
