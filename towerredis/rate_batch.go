package towerredis

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// stock is a replica's batch of tokens, for [WithBatch]: the tokens of
// one grant, token i due at first + i*interval (the script's schedule),
// handed out in order, and the tokens given back, due now. A short mutex
// guards it; the round trip for the next batch is made outside it, by one
// caller at a time, and the others wait for that batch.
type stock struct {
	b    *bucket
	keys []string
	size int           // tokens asked per round trip
	keep time.Duration // how long after its due a token may still be spent: the bucket's span

	mu       sync.Mutex
	at       time.Duration // when the batch came in, a mono reading
	first    time.Duration // due instant of token 0 on the script's schedule
	next, n  int           // next token to hand out, tokens in the batch
	spare    int           // tokens given back, due now
	spareEnd time.Duration // the last instant they are kept, as a token is up to its due + keep
	fetching *fetch        // the round trip for the next batch, if one is under way
}

// fetch is a round trip for the next batch, which the replica's other
// callers wait for.
type fetch struct {
	done       chan struct{} // closed when it is over
	failedOpen bool          // Redis did not answer and the limit fails open; set before done is closed
}

func newStock(b *bucket, keys []string, size int) *stock {
	return &stock{b: b, keys: keys, size: size, keep: time.Duration(b.burst) * b.interval}
}

// take hands out a token of the batch, asking Redis for the next batch
// when this one is spent, and sleeps until the token is due. A done ctx
// gets a token due now, from the batch or from Redis (the next batch's
// tokens there now, or one token, in one round trip), or ctx.Err().
func (s *stock) take(ctx context.Context) (outcome, error) {
	var w watch
	defer w.done(s.b.o.sink)
	for {
		probe := ctx.Err() != nil
		s.mu.Lock()
		now := mono.Now()
		due, ok := s.pop(now, s.by(ctx, now, probe))
		if ok {
			s.mu.Unlock()
			if !sleepUntil(ctx, due, &w, s.b.o.sink) {
				return 0, ctx.Err() // the token is lost, on the side of the limit
			}
			return fromStock, nil
		}
		if s.fetching == nil && s.next >= s.n {
			return s.fetch(ctx, &w) // a probe's too: it asks with no wait
		}
		if probe {
			s.mu.Unlock()
			// The batch's next token is not due yet, or another caller is
			// asking for the next batch: one token there now, if Redis
			// has one, rather than wait.
			_, from, err := s.b.take(ctx, s.keys, 1, &w)
			return from, err
		}
		if f := s.fetching; f != nil {
			s.mu.Unlock()
			w.start(s.b.o.sink)
			select {
			case <-f.done:
				if f.failedOpen {
					// Redis did not answer that round trip: fail open
					// too, rather than each try in turn.
					return failedOpen, nil
				}
				continue
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		// The next token is due after ctx's deadline: wait for the end.
		s.mu.Unlock()
		w.start(s.b.o.sink)
		<-ctx.Done()
		return 0, ctx.Err()
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
// it is due by the instant by. Tokens past their keep are skipped, and
// lost. s.mu must be held.
func (s *stock) pop(now, by time.Duration) (time.Duration, bool) {
	if s.spare > 0 {
		if now <= s.spareEnd {
			s.spare--
			return now, true
		}
		s.spare = 0
	}
	if s.next < s.n && s.due(s.next)+s.keep < now {
		// Skip to the first token due at or after now - keep; the skipped
		// tokens are lost.
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
func (s *stock) fetch(ctx context.Context, w *watch) (outcome, error) {
	f := &fetch{done: make(chan struct{})}
	s.fetching = f
	s.mu.Unlock()
	var (
		g    grant
		from outcome
		err  error
	)
	defer func() {
		// Installed even if the observer or the sink panicked, so that
		// the callers waiting for this batch go on.
		s.mu.Lock()
		if from == fromRedis {
			s.at, s.first, s.next, s.n = g.at, g.due, 1, g.n
		}
		f.failedOpen = from == failedOpen
		s.fetching = nil
		s.mu.Unlock()
		close(f.done)
	}()
	g, from, err = s.b.take(ctx, s.keys, s.size, w)
	if err != nil || from != fromRedis {
		return from, err
	}
	if !sleepUntil(ctx, g.due, w, s.b.o.sink) {
		return 0, ctx.Err()
	}
	return fromStock, nil
}

// giveBack returns a token released unused: it is due now, and lost if
// not taken within keep.
func (s *stock) giveBack() {
	s.mu.Lock()
	s.spare++
	s.spareEnd = mono.Now() + s.keep
	s.mu.Unlock()
}
