package tower_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// kinds are the four questions, by name.
var kinds = []struct {
	name string
	is   func(error) bool
}{
	{"Timeout", tower.IsTimeout},
	{"Overloaded", tower.IsOverloaded},
	{"Throttled", tower.IsThrottled},
	{"Unavailable", tower.IsUnavailable},
}

// answers returns the names of the kinds err answers true to.
func answers(err error) string {
	var got []string
	for _, k := range kinds {
		if k.is(err) {
			got = append(got, k.name)
		}
	}
	return fmt.Sprint(got)
}

// refused is a user's error with every behaviour, each answering as told.
type refused struct{ timeout, overloaded, throttled, unavailable bool }

func (refused) Error() string       { return "refused" }
func (e refused) Timeout() bool     { return e.timeout }
func (e refused) Overloaded() bool  { return e.overloaded }
func (e refused) Throttled() bool   { return e.throttled }
func (e refused) Unavailable() bool { return e.unavailable }

// The library's errors answer what they are, through wrapping and
// joining; a user's error answers the same way; the first error of the
// chain with the method decides.
func TestErrorBehaviours(t *testing.T) {
	netTimeout := &os.PathError{Op: "read", Path: "x", Err: os.ErrDeadlineExceeded}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, "[]"},
		{"plain", errors.New("x"), "[]"},
		{"ErrElapsed", timeout.ErrElapsed, "[Timeout]"},
		{"DeadlineExceeded", context.DeadlineExceeded, "[Timeout]"},
		{"a timeout of package os", netTimeout, "[Timeout]"},
		{"Canceled", context.Canceled, "[]"},
		{"ErrOverloaded", loadshed.ErrOverloaded, "[Overloaded]"},
		{"buffer.ErrClosed", buffer.ErrClosed, "[Unavailable]"},
		{"ErrNoEndpoints", balance.ErrNoEndpoints, "[Unavailable]"},
		{"balance.ErrClosed", balance.ErrClosed, "[Unavailable]"},
		{"ReadyError", &towerhttp.ReadyError{Err: errors.New("broken")}, "[Unavailable]"},
		{"ReadyError over ErrElapsed", &towerhttp.ReadyError{Err: timeout.ErrElapsed}, "[Timeout Unavailable]"},
		{"wrapped", fmt.Errorf("retry: %w", loadshed.ErrOverloaded), "[Overloaded]"},
		{"joined", errors.Join(errors.New("x"), timeout.ErrElapsed, buffer.ErrClosed), "[Timeout Unavailable]"},
		{"a user's", refused{overloaded: true, throttled: true}, "[Overloaded Throttled]"},
		{"a user's false stops the chain", fmt.Errorf("%w", refused{}), "[]"},
		{"a user's over the library's", refused{timeout: true}, "[Timeout]"},
		{"a panic with an error", &tower.PanicError{Value: loadshed.ErrOverloaded}, "[Overloaded]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := answers(tt.err); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// The sentinels keep tower's messages, and errors.Is knows each as
// itself and as no other.
func TestSentinels(t *testing.T) {
	sentinels := []struct {
		err  error
		want string
	}{
		{timeout.ErrElapsed, "request timed out"},
		{loadshed.ErrOverloaded, "service overloaded"},
		{buffer.ErrClosed, "buffer's worker closed unexpectedly"},
		{balance.ErrNoEndpoints, "load balancer has no endpoints"},
		{balance.ErrClosed, "load balancer closed"},
	}
	for i, s := range sentinels {
		if got := s.err.Error(); got != s.want {
			t.Errorf("got %q, want %q", got, s.want)
		}
		for j, other := range sentinels {
			if got := errors.Is(fmt.Errorf("x: %w", s.err), other.err); got != (i == j) {
				t.Errorf("errors.Is(%q wrapped, %q): got %v, want %v", s.want, other.want, got, i == j)
			}
		}
	}
}

// Asking costs no allocation, whether the error is wrapped or not.
func TestErrorBehavioursDoNotAllocate(t *testing.T) {
	wrapped := fmt.Errorf("x: %w", errors.Join(errors.New("y"), loadshed.ErrOverloaded))
	for _, err := range []error{loadshed.ErrOverloaded, wrapped, errors.New("plain")} {
		if n := testing.AllocsPerRun(100, func() {
			for _, k := range kinds {
				k.is(err)
			}
		}); n != 0 {
			t.Errorf("%v: got %v allocations, want 0", err, n)
		}
	}
}

// quotaError is a user's middleware's error for a client over its quota:
// it says Throttled, and when to come back.
type quotaError struct{ retryIn time.Duration }

func (e *quotaError) Error() string   { return fmt.Sprintf("quota exceeded, retry in %v", e.retryIn) }
func (e *quotaError) Throttled() bool { return true }

// busyError is a user's middleware's error for a request it cannot take
// now.
type busyError struct{}

func (busyError) Error() string    { return "worker pool busy" }
func (busyError) Overloaded() bool { return true }

// A user's error answers by its methods, as the library's do, wrapped or
// not; so package towerhttp, towergrpc and metrics classify it as theirs.
func ExampleIsOverloaded() {
	err := fmt.Errorf("resize: %w", busyError{})
	fmt.Println(tower.IsOverloaded(err), tower.IsOverloaded(loadshed.ErrOverloaded))
	fmt.Println(towerhttp.StatusCode(err))
	// Output:
	// true true
	// 503
}

// A throttled caller is answered 429, where an overloaded service is
// answered 503.
func ExampleIsThrottled() {
	err := &quotaError{retryIn: 30 * time.Second}
	fmt.Println(tower.IsThrottled(err), towerhttp.StatusCode(err) == http.StatusTooManyRequests)
	// Output: true true
}

// Timeouts of this module, of a context and of package net and os answer
// alike.
func ExampleIsTimeout() {
	fmt.Println(tower.IsTimeout(timeout.ErrElapsed), tower.IsTimeout(context.DeadlineExceeded),
		tower.IsTimeout(os.ErrDeadlineExceeded), tower.IsTimeout(context.Canceled))
	// Output: true true true false
}

// A closed Buffer, a balancer with nothing to send to and a stack whose
// Ready failed cannot take any request.
func ExampleIsUnavailable() {
	fmt.Println(tower.IsUnavailable(buffer.ErrClosed), tower.IsUnavailable(balance.ErrNoEndpoints),
		tower.IsUnavailable(&towerhttp.ReadyError{Err: errors.New("db down")}),
		tower.IsUnavailable(loadshed.ErrOverloaded))
	// Output: true true true false
}

// waitFor is a user's error that says when to try again.
type waitFor time.Duration

func (waitFor) Error() string               { return "wait" }
func (e waitFor) RetryAfter() time.Duration { return time.Duration(e) }
func (waitFor) Throttled() bool             { return true }

// RetryAfter finds the first error of the chain that says when to try
// again, through wrapping and joining, and reports false when none does or
// the first says 0.
func TestRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want time.Duration
		ok   bool
	}{
		{nil, 0, false},
		{errors.New("plain"), 0, false},
		{loadshed.ErrOverloaded, 0, false},
		{waitFor(0), 0, false},
		{waitFor(-time.Second), 0, false},
		{fmt.Errorf("%w", waitFor(0)), 0, false},
		{waitFor(1), 1, true},
		{fmt.Errorf("call: %w", &limit.KeyLimitError{Wait: 250 * time.Millisecond}), 250 * time.Millisecond, true},
		{waitFor(1500 * time.Millisecond), 1500 * time.Millisecond, true},
		{fmt.Errorf("wrapped: %w", waitFor(time.Second)), time.Second, true},
		{errors.Join(errors.New("first"), waitFor(2*time.Second), waitFor(3*time.Second)), 2 * time.Second, true},
	} {
		got, ok := tower.RetryAfter(tt.err)
		if got != tt.want || ok != tt.ok {
			t.Errorf("RetryAfter(%v) = %v, %t; want %v, %t", tt.err, got, ok, tt.want, tt.ok)
		}
	}
}
