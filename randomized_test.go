package tower_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
)

// A randomized run through Timeout(50ms) > Buffer(16) > ConcurrencyLimit(4) >
// RateLimit(20 per 10ms), in virtual time: 10,000 requests from 100 clients,
// each request with a random fate drawn up front from a seeded source. A
// caller may give up while it waits in Ready or in Call; the inner service
// takes a random time, honours its context or not, and answers, fails, or
// panics on the caller's goroutine. Whatever happens, every request is
// answered exactly once, with its own answer; the inner service never runs
// more than 4 calls at once; all capacity is back at the end; and no
// goroutine is left (synctest checks that).
func TestRandomizedTimeoutBufferConcurrencyRate(t *testing.T) {
	const (
		clients   = 100
		perClient = 100
		requests  = clients * perClient
		limitN    = 4
		bound     = 16
	)
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 2026))
		fates := make([]fate, requests)
		for i := range fates {
			fates[i] = drawFate(rng)
		}
		inner := &randomInner{fates: fates, calls: make([]atomic.Int32, requests), ends: make([]atomic.Int32, requests)}
		sem := limit.NewSemaphore(limitN)
		buf := buffer.NewLayer[int, int](bound)
		svc := stack.New[int, int]().
			Layer(timeout.NewLayer[int, int](50 * time.Millisecond)).
			Layer(buf).
			Layer(limit.NewSharedConcurrencyLayer[int, int](sem)).
			Layer(limit.NewRateLayer[int, int](20, 10*time.Millisecond)).
			Service(tower.ServiceFunc[int, int](inner.serve))

		answers := make([]answer, requests)
		var answered [requests]atomic.Int32
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for k := range perClient {
					id := c*perClient + k
					f := fates[id]
					time.Sleep(f.think)
					answers[id] = send(svc, id, f)
					answered[id].Add(1)
				}
			})
		}
		wg.Wait()

		var tally [numKinds]int
		for id := range requests {
			if n := answered[id].Load(); n != 1 {
				t.Fatalf("request %d answered %d times, want 1", id, n)
			}
			tally[answers[id].kind]++
			if err := check(id, fates[id], answers[id], int(inner.calls[id].Load()), innerEnd(inner.ends[id].Load())); err != nil {
				t.Errorf("request %d: %v", id, err)
			}
		}
		if max := inner.maxRunning.Load(); max > limitN {
			t.Errorf("the inner service ran %d calls at once, want at most %d", max, limitN)
		}
		t.Logf("outcomes: %d ok, %d inner errors, %d panics, %d timed out, %d cancelled; at most %d inner calls at once",
			tally[answeredOK], tally[answeredErr], tally[answeredPanic], tally[answeredElapsed], tally[answeredCanceled], inner.maxRunning.Load())
		for kind, n := range tally {
			if n == 0 {
				t.Errorf("no request ended as %v: the run does not exercise every path", answerKind(kind))
			}
		}

		// All capacity is back: every permit of the limit, and every slot of
		// the buffer, granted at once.
		if n := sem.Available(); n != limitN {
			t.Errorf("the limit has %d permits free at the end, want %d", n, limitN)
		}
		var held []tower.Permit[int, int]
		for range bound {
			p, ok, err := tower.ReadyNow(svc)
			if !ok || err != nil {
				t.Fatalf("ReadyNow after %d of %d slots: %v, %v; want a permit", len(held), bound, ok, err)
			}
			held = append(held, p)
		}
		for i := range held {
			held[i].Release()
		}
		buf.Close()
	})
}

// A fate is what happens to one request, drawn before the run.
type fate struct {
	think       time.Duration // before the client sends it
	cancelAfter time.Duration // the caller gives up this long after it starts; 0: never
	latency     time.Duration // the inner call's
	ignoresCtx  bool          // the inner call takes its latency whatever its context says
	outcome     innerOutcome
}

type innerOutcome int

const (
	innerOK innerOutcome = iota
	innerErr
	innerPanic
)

func drawFate(rng *rand.Rand) fate {
	f := fate{
		think:      time.Duration(rng.IntN(200)) * time.Millisecond,
		latency:    time.Duration(rng.IntN(25)) * time.Millisecond,
		ignoresCtx: rng.IntN(4) == 0,
	}
	if rng.IntN(10) == 0 {
		f.latency = time.Duration(40+rng.IntN(60)) * time.Millisecond // beyond the Timeout, often
	}
	if rng.IntN(5) == 0 {
		f.cancelAfter = time.Duration(1+rng.IntN(80)) * time.Millisecond
	}
	switch r := rng.IntN(20); {
	case r == 0:
		f.outcome = innerPanic
	case r < 4:
		f.outcome = innerErr
	}
	return f
}

// randomInner is the inner service: it answers request id as its fate
// says, and counts the calls it runs at once.
type randomInner struct {
	fates      []fate
	calls      []atomic.Int32 // per request: how many times it arrived
	ends       []atomic.Int32 // per request: how its inner call ended, an innerEnd
	running    atomic.Int32
	maxRunning atomic.Int32
}

// errInjected is the error the inner service fails with; a panic carries
// an injectedPanic.
var errInjected = errors.New("injected failure")

type injectedPanic struct{ id int }

// innerEnd is how an inner call ended.
type innerEnd int32

const (
	notCalled innerEnd = iota
	endedOK
	endedErr
	endedPanic
	endedCtx // it gave up when its context ended
)

func (s *randomInner) serve(ctx context.Context, id int) (int, error) {
	s.calls[id].Add(1)
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for m := s.maxRunning.Load(); n > m && !s.maxRunning.CompareAndSwap(m, n); m = s.maxRunning.Load() {
	}
	f := s.fates[id]
	wait := time.NewTimer(f.latency)
	defer wait.Stop()
	if f.ignoresCtx {
		<-wait.C
	} else {
		select {
		case <-wait.C:
		case <-ctx.Done():
			s.ends[id].Store(int32(endedCtx))
			return 0, ctx.Err()
		}
	}
	switch f.outcome {
	case innerErr:
		s.ends[id].Store(int32(endedErr))
		return 0, fmt.Errorf("request %d: %w", id, errInjected)
	case innerPanic:
		s.ends[id].Store(int32(endedPanic))
		panic(injectedPanic{id})
	}
	s.ends[id].Store(int32(endedOK))
	return id, nil
}

type answerKind int

const (
	answeredOK answerKind = iota
	answeredErr
	answeredPanic
	answeredElapsed
	answeredCanceled
	numKinds
)

func (k answerKind) String() string {
	return [...]string{"a response", "the inner error", "a panic", "ErrElapsed", "context.Canceled"}[k]
}

// An answer is what one caller got.
type answer struct {
	kind     answerKind
	res      int
	err      error
	panicked any
}

// send sends request id through svc as a caller that gives up after
// f.cancelAfter, and classifies what it gets.
func send(svc tower.Service[int, int], id int, f fate) (a answer) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.cancelAfter > 0 {
		stop := time.AfterFunc(f.cancelAfter, cancel)
		defer stop.Stop()
	}
	defer func() {
		if v := recover(); v != nil {
			a = answer{kind: answeredPanic, panicked: v}
		}
	}()
	a.res, a.err = tower.Call(ctx, svc, id)
	switch {
	case a.err == nil:
		a.kind = answeredOK
	case errors.Is(a.err, errInjected):
		a.kind = answeredErr
	case errors.Is(a.err, timeout.ErrElapsed):
		a.kind = answeredElapsed
	case errors.Is(a.err, context.Canceled):
		a.kind = answeredCanceled
	default:
		a.kind = -1
	}
	return a
}

// check says what is wrong, if anything, with answer a to request id,
// whose fate was f, which reached the inner service calls times, and
// whose inner call ended as end.
func check(id int, f fate, a answer, calls int, end innerEnd) error {
	switch {
	case calls > 1:
		return fmt.Errorf("reached the inner service %d times, want at most once", calls)
	case a.kind < 0:
		return fmt.Errorf("got unexpected error %v", a.err)
	case a.kind == answeredOK && (a.res != id || end != endedOK):
		return fmt.Errorf("got response %d, inner call ended as %d, want its own answer, %d", a.res, end, id)
	case a.kind == answeredErr && (end != endedErr || a.err.Error() != fmt.Sprintf("request %d: %v", id, errInjected)):
		return fmt.Errorf("got %v, inner call ended as %d, want its own error", a.err, end)
	case a.kind == answeredPanic && (end != endedPanic || a.panicked != injectedPanic{id}):
		return fmt.Errorf("panicked with %v, inner call ended as %d, want its own panic", a.panicked, end)
	case a.kind == answeredCanceled && f.cancelAfter == 0:
		return fmt.Errorf("got %v, but its caller never gave up", a.err)
	case end == endedPanic && a.kind != answeredPanic:
		// A Cooperative Timeout runs the inner call on the caller's
		// goroutine: its panic always reaches the caller.
		return fmt.Errorf("the inner call panicked, the caller got %v", a.err)
	}
	return nil
}
