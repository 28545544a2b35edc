package towerredis

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/mono"
)

// rateSource is the GCRA script; rate.lua documents it.
//
//go:embed rate.lua
var rateSource string

// rateHash is the script's SHA-1, for EVALSHA; the source is sent only
// when Redis does not know it.
var rateHash = redis.NewScript(rateSource).Hash()

// maxSpan bounds a bucket's span, burst*interval, in microseconds (142
// years): Redis's clock plus the span, plus a wait, must stay below 2^53
// for the script's doubles to be exact.
const maxSpan = 1 << 52

// MinReserve is the least a [Bucket]'s Ready without a deadline reserves
// ahead (see [Bucket]): enough for the fleet's waiters to line up in Redis
// in the order they came rather than all ask again at each token.
const MinReserve = time.Second

// gcra is what a Bucket and a Keyed share: the bucket's arithmetic and
// the round trip to the script.
type gcra struct {
	client   redis.Scripter
	o        options
	name     string
	interval time.Duration // per/num rounded up to the microsecond
	burst    int
	reserve  time.Duration // the most a caller without a deadline reserves ahead

	intervalArg, burstArg any // the script's constant arguments, boxed once
}

// newGCRA panics, naming fn and the parameter, if one is out of range.
func newGCRA(fn string, client redis.Scripter, name string, num int, per time.Duration, burst int, o options) gcra {
	checkClient(fn, client, name)
	if num < 1 {
		panic(fmt.Sprintf("%s: num must be at least 1, got %d", fn, num))
	}
	if per <= 0 {
		panic(fmt.Sprintf("%s: per must be positive, got %v", fn, per))
	}
	if int64(num) > int64(per/time.Microsecond) {
		panic(fmt.Sprintf("%s: per/num must be at least a microsecond, Redis's clock's resolution, got %d per %v", fn, num, per))
	}
	if burst < 1 {
		panic(fmt.Sprintf("%s: burst must be at least 1, got %d", fn, burst))
	}
	us := (int64(per)-1)/(int64(num)*1000) + 1
	interval := time.Duration(us) * time.Microsecond
	if int64(burst) > maxSpan/us {
		panic(fmt.Sprintf("%s: burst %d of tokens every %v is longer than the script's arithmetic holds (2^52µs)", fn, burst, interval))
	}
	if o.batch > burst {
		panic(fmt.Sprintf("%s: WithBatch(%d) asks for more tokens at once than burst %d allows", fn, o.batch, burst))
	}
	return gcra{
		client: client, o: o, name: name, interval: interval, burst: burst,
		reserve:     max(time.Duration(burst)*interval, MinReserve),
		intervalArg: us, burstArg: int64(burst),
	}
}

// grant is the script's answer.
type grant struct {
	n   int           // tokens granted
	due time.Duration // token 1's due instant, a mono reading; for n = 0, the next token's
	tat int64         // the bucket's state after the call, µs
	at  time.Duration // when the answer came in, a mono reading
}

// ask runs the script on keys to take up to want tokens (want >= 1),
// those due within maxWait included. The due instant is counted from the
// answer's arrival on the local clock, so a token is never used before
// Redis's clock allows it, only up to a round trip later.
func (b *gcra) ask(ctx context.Context, keys []string, want int, maxWait time.Duration) (grant, error) {
	return b.run(ctx, &b.o, keys, want, int64(max(maxWait, 0)/time.Microsecond))
}

// run runs the script on keys with want and arg4 (see rate.lua), under the
// options o. If the observer panics on a round trip that granted tokens,
// they go back (unobserved) before the panic goes on up.
func (b *gcra) run(ctx context.Context, o *options, keys []string, want int, arg4 int64) (grant, error) {
	args := []any{b.intervalArg, b.burstArg, int64(want), arg4}
	v, err := roundTrip(ctx, o, "rate", func(ctx context.Context) (any, error) {
		res, err := b.client.EvalSha(ctx, rateHash, keys, args...).Result()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			res, err = b.client.Eval(ctx, rateSource, keys, args...).Result()
		}
		return res, err
	}, func(reply any) ([3]int64, bool) { return rateReply(reply, want) }, func(v [3]int64) {
		if want > 0 && v[0] > 0 { // given back unobserved: the observer may panic again
			quiet := *o
			quiet.observer = nil
			b.run(context.Background(), &quiet, keys, -int(v[0]), v[2])
		}
	})
	if err != nil {
		return grant{}, err
	}
	at := mono.Now()
	return grant{n: int(v[0]), due: at + time.Duration(v[1])*time.Microsecond, tat: v[2], at: at}, nil
}

// rateReply checks the script's reply to a call for want tokens: three
// integers, the first, the tokens granted, between 0 and want (0 to give
// back), and a refusal's wait positive, lest the caller ask again at once
// forever.
func rateReply(reply any, want int) ([3]int64, bool) {
	v, ok := ints[[3]int64](reply)
	if !ok || v[0] < 0 || v[0] > int64(max(want, 0)) {
		return v, false
	}
	return v, want < 0 || v[0] > 0 || v[1] > 0
}

// budget is how far ahead a caller with ctx reserves: the time left to
// ctx's deadline, at most b.reserve.
func (b *gcra) budget(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(0, min(time.Until(d), b.reserve))
	}
	return b.reserve
}

// An outcome says where a caller's token came from, and so where it goes
// back.
type outcome uint8

const (
	fromRedis  outcome = iota + 1 // a token of the bucket in Redis
	fromStock                     // a token of the replica's batch
	failedOpen                    // no token: Redis was unreachable and the limit fails open
)

// take asks for up to want tokens of the bucket at keys until it gets
// some, reserving those due within budget(ctx) (the caller sleeps until
// the first is due) and otherwise sleeping until the next token. A done
// ctx gets what is there now, in one round trip. When Redis does not
// answer, it returns failedOpen or an *UnreachableError.
func (b *gcra) take(ctx context.Context, keys []string, want int, w *watch) (grant, outcome, error) {
	for {
		probe := ctx.Err() != nil // it reserves nothing it could not wait for
		var maxWait time.Duration
		if !probe {
			maxWait = b.budget(ctx)
		}
		g, err := b.ask(ctx, keys, want, maxWait)
		if err != nil {
			if err = b.o.failed(b.name, err); err != nil {
				return grant{}, 0, err
			}
			return grant{}, failedOpen, nil
		}
		if g.n > 0 {
			return g, fromRedis, nil
		}
		if probe {
			return grant{}, 0, ctx.Err()
		}
		w.start(b.o.sink, nothing) // nothing granted yet
		if !sleep(ctx, g.due-mono.Now()) {
			return grant{}, 0, ctx.Err()
		}
	}
}

// failed returns what a round trip of the limit name that failed with err
// comes to: err itself if it is an ErrBadReply, which never grants; nil
// under FailOpen, which admits; an *UnreachableError under FailClosed.
func (o *options) failed(name string, err error) error {
	switch {
	case errors.Is(err, ErrBadReply):
		return err
	case o.fail == FailOpen:
		return nil
	}
	return &UnreachableError{Name: name, Err: err}
}

// sleepUntil sleeps until the instant due, a mono reading, or until ctx
// ends, and reports whether it got there. If the sink panics as the wait
// begins, undo gives back the token the caller waits for.
func sleepUntil(ctx context.Context, due time.Duration, w *watch, sink metrics.Sink, undo func()) bool {
	d := due - mono.Now()
	if d <= 0 {
		return true
	}
	w.start(sink, undo)
	return sleep(ctx, d)
}

// giveBack returns n unused tokens taken together to the bucket at keys,
// in one round trip, if no token was taken after them: mark is the tat
// their take answered (see rate.lua). If Redis does not answer, they are
// lost, on the side of the limit.
func (b *gcra) giveBack(keys []string, n int, mark int64) {
	b.run(context.Background(), &b.o, keys, -n, mark)
}

// watch reports a caller as Waiting to a sink once, from its first wait to
// its end. If the sink panics, undo runs first.
type watch struct{ on bool }

// start tells sink, if not nil, that the caller waits, unless it was told
// already.
func (w *watch) start(sink metrics.Sink, undo func()) {
	if sink != nil && !w.on {
		guard.Undo(func() { sink.Add(metrics.Waiting, 1) }, undo)
		w.on = true
	}
}

// done tells sink that the wait start told it of is over.
func (w *watch) done(sink metrics.Sink, undo func()) {
	if w.on {
		w.on = false
		guard.Undo(func() { sink.Add(metrics.Waiting, -1) }, undo)
	}
}

// nothing is the undo function of a caller that holds nothing.
func nothing() {}
