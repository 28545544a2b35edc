package retry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

// scripted is a service whose calls each take the next of its latencies
// and then answer with the next of its results: "ok" or an error of that
// text. It records when each call started, from the test's start.
type scripted struct {
	mu        sync.Mutex
	start     time.Time
	latencies []time.Duration
	results   []string
	started   []time.Duration
}

func newScripted(latencies []time.Duration, results ...string) *scripted {
	return &scripted{start: time.Now(), latencies: latencies, results: results}
}

func (s *scripted) service() tower.ServiceFunc[string, string] {
	return func(ctx context.Context, req string) (string, error) {
		s.mu.Lock()
		n := len(s.started)
		s.started = append(s.started, time.Since(s.start))
		d, r := s.latencies[n], s.results[n]
		s.mu.Unlock()
		time.Sleep(d)
		if r == "ok" {
			return "ok", nil
		}
		return "", errors.New(r)
	}
}

func (s *scripted) calls() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.started...)
}

// Attempt.Latency is the time of the attempt's call alone: not the
// backoff before it, nor the wait for the inner service's readiness.
// Without a deadline, it is not measured.
func TestAttemptLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted([]time.Duration{30 * ms, 70 * ms, 5 * ms}, "e1", "e2", "ok")
		var seen []time.Duration
		policy := retry.PolicyFunc[string, string](func(_ context.Context, a *attempt) (time.Duration, bool) {
			seen = append(seen, a.Latency)
			return 100 * ms, a.Err != nil
		})
		svc := retry.New[string, string](s.service(), policy)
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		if _, err := tower.Call(ctx, svc, "hello"); err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(seen), "[30ms 70ms 5ms]"; got != want {
			t.Errorf("latencies seen by the policy: got %s, want %s", got, want)
		}
		if got, want := fmt.Sprint(s.calls()), "[0s 130ms 300ms]"; got != want {
			t.Errorf("calls started at %s, want %s", got, want)
		}

		seen = nil
		s = newScripted([]time.Duration{30 * ms, 5 * ms}, "e1", "ok")
		svc = retry.New[string, string](s.service(), policy)
		if _, err := tower.Call(t.Context(), svc, "hello"); err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(seen), "[0s 0s]"; got != want {
			t.Errorf("without a deadline: latencies seen by the policy: got %s, want %s", got, want)
		}
	})
}

// The latency a StandardPolicy expects is the moving average of the final
// attempts' latencies, each new one weighing 1/8; retried ones do not
// count.
func TestStandardPolicyExpected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted([]time.Duration{100 * ms, 20 * ms, 1 * ms, 60 * ms}, "ok", "ok", "e", "ok")
		policy := retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(2))
		svc := retry.New[string, string](s.service(), policy)
		if got := policy.Expected(); got != 0 {
			t.Errorf("before any attempt: expected %v, want 0", got)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		for _, want := range []time.Duration{100 * ms, 90 * ms, 86250 * time.Microsecond} {
			if _, err := tower.Call(ctx, svc, "hello"); err != nil {
				t.Fatal(err)
			}
			if got := policy.Expected(); got != want {
				t.Errorf("expected %v, want %v", got, want)
			}
		}
	})
}

// An attempt that answers at once counts as 1ns, so that the policy knows
// it has seen one.
func TestStandardPolicyExpectedInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := retry.NewPolicy[string, string](retry.AnyError)
		svc := retry.New[string, string](echo, policy)
		if _, err := tower.Call(t.Context(), svc, "no deadline"); err != nil {
			t.Fatal(err)
		}
		if got := policy.Expected(); got != 0 {
			t.Errorf("after a request without a deadline: expected %v, want 0: it was not timed", got)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		for range 3 {
			if _, err := tower.Call(ctx, svc, "hello"); err != nil {
				t.Fatal(err)
			}
			if got := policy.Expected(); got != time.Nanosecond {
				t.Errorf("expected %v, want 1ns", got)
			}
		}
	})
}

// No retry starts when the caller's deadline leaves less than the backoff
// and the latency the policy expects: the caller gets the failed
// attempt's own error at once, not a context error at its deadline.
func TestStandardPolicyDeadlineAware(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deadline time.Duration // after the request starts
		want     string        // the error or result
		calls    string        // when the calls of the request started
	}{
		// Learnt: 100ms. Fails at 60ms, backoff 10ms: the retry would
		// start at 70ms and answer at 170ms.
		{"TooLittleLeft", 170 * ms, "fast 503", "[0s]"},
		{"JustEnough", 170*ms + 1, "ok", "[0s 70ms]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScripted([]time.Duration{100 * ms, 60 * ms, 100 * ms}, "ok", "fast 503", "ok")
				backoff := retry.NewExponentialBackoff(10*ms, 10*ms, 0)
				policy := retry.NewPolicy[string, string](retry.AnyError, retry.WithBackoff(backoff))
				svc := retry.New[string, string](s.service(), policy)
				learn, cancel := context.WithTimeout(t.Context(), time.Hour)
				defer cancel()
				if _, err := tower.Call(learn, svc, "learn"); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
				defer cancel()
				res, err := tower.Call(ctx, svc, "hello")
				if err != nil {
					res = err.Error()
				}
				if res != tt.want {
					t.Errorf("got %q, want %q", res, tt.want)
				}
				calls := s.calls()[1:]
				for i := range calls {
					calls[i] -= 100 * ms // the learning call took the first 100ms
				}
				if got := fmt.Sprint(calls); got != tt.calls {
					t.Errorf("calls started at %s, want %s", got, tt.calls)
				}
				if tt.want == "fast 503" {
					if got := time.Since(start); got != 60*ms {
						t.Errorf("answered after %v, want 60ms: at once after the failure", got)
					}
				}
			})
		})
	}
}

// pushback reads a wait from an error "wait <duration>".
func pushback(_ string, err error) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	s, ok := strings.CutPrefix(err.Error(), "wait ")
	if !ok {
		return 0, false
	}
	d, e := time.ParseDuration(s)
	return d, e == nil
}

// A pushback is honoured: the retry waits the longer of it and the
// backoff; one that asks for no retry (negative) or for more than the
// maximum returns the result as it is, without drawing on the budget.
func TestStandardPolicyPushback(t *testing.T) {
	for _, tt := range []struct {
		name        string
		first       string
		want        string
		calls       string
		withdrawals int
	}{
		{"Honoured", "wait 1s", "ok", "[0s 1s]", 1},
		{"BelowBackoff", "wait 10ms", "ok", "[0s 50ms]", 1},
		{"NoPushback", "plain", "ok", "[0s 50ms]", 1},
		{"AtMax", "wait 2s", "ok", "[0s 2s]", 1},
		{"Zero", "wait 0s", "ok", "[0s 50ms]", 1},
		{"BeyondMax", "wait 2.001s", "wait 2.001s", "[0s]", 0},
		{"DoNotRetry", "wait -1ms", "wait -1ms", "[0s]", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScripted([]time.Duration{0, 0}, tt.first, "ok")
				budget := &countingBudget{allow: 10}
				policy := retry.NewPolicy[string, string](retry.AnyError,
					retry.WithBackoff(retry.NewExponentialBackoff(50*ms, 50*ms, 0)),
					retry.WithPushback(pushback, 2*time.Second),
					retry.WithBudget(budget))
				svc := retry.New[string, string](s.service(), policy)
				res, err := tower.Call(t.Context(), svc, "hello")
				if err != nil {
					res = err.Error()
				}
				if res != tt.want {
					t.Errorf("got %q, want %q", res, tt.want)
				}
				if got := fmt.Sprint(s.calls()); got != tt.calls {
					t.Errorf("calls started at %s, want %s", got, tt.calls)
				}
				budget.check(t, 1, tt.withdrawals)
			})
		})
	}
}

// A pushback that would reach the caller's deadline is not waited for.
func TestStandardPolicyPushbackPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted([]time.Duration{0, 0}, "wait 1s", "ok")
		policy := retry.NewPolicy[string, string](retry.AnyError, retry.WithPushback(pushback, time.Minute))
		svc := retry.New[string, string](s.service(), policy)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := tower.Call(ctx, svc, "hello"); err == nil || err.Error() != "wait 1s" {
			t.Errorf("got %v, want the server's own answer, wait 1s", err)
		}
		if got := fmt.Sprint(s.calls()); got != "[0s]" {
			t.Errorf("calls started at %s, want [0s]", got)
		}
	})
}

func TestWithPushbackBadInput(t *testing.T) {
	towertest.Panics(t, "retry.WithPushback: nil after", func() {
		retry.WithPushback[string](nil, time.Second)
	})
	towertest.Panics(t, "retry.WithPushback: max must be positive, got 0s", func() {
		retry.WithPushback(pushback, 0)
	})
	towertest.Panics(t, "retry.WithPushback: max must be positive, got -1s", func() {
		retry.WithPushback(pushback, -time.Second)
	})
	other := func(int, error) (time.Duration, bool) { return 0, false }
	towertest.Panics(t, "retry.NewPolicy: the pushback is a func(int, error) (time.Duration, bool), want a func(string, error) (time.Duration, bool)", func() {
		retry.NewPolicy[string, string](retry.AnyError, retry.WithPushback(other, time.Second))
	})
}
