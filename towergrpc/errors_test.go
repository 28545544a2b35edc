package towergrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
)

var errTest = errors.New("test error")

// bufferFailure returns the *buffer.ServiceError of a Buffer whose inner
// service is broken: its Ready fails with cause.
func bufferFailure(t *testing.T, cause error) error {
	t.Helper()
	b := buffer.New[int, int](brokenService{cause}, 1)
	defer b.Close()
	p, err := b.Ready(t.Context()) // reserves a place in the queue
	if err == nil {
		_, err = p.Call(t.Context(), 1) // the worker finds the inner service broken
	}
	var se *buffer.ServiceError
	if !errors.As(err, &se) {
		t.Fatalf("got %v from a failed Buffer, want a *buffer.ServiceError", err)
	}
	return err
}

// brokenService is a service whose Ready fails with err.
type brokenService struct{ err error }

func (s brokenService) Ready(context.Context) (tower.Permit[int, int], error) {
	return tower.Permit[int, int]{}, s.err
}

// A mapping says what an error must become: a status with code and msg
// that still wraps the original error, or, with same, the error itself.
type mapping struct {
	code codes.Code
	msg  string
	same bool
}

func checkMapping(t *testing.T, in, got error, want mapping) {
	t.Helper()
	if want.same {
		if got != in {
			t.Fatalf("got %v (%T), want the error unchanged", got, got)
		}
		return
	}
	st, ok := status.FromError(got)
	if !ok || st.Code() != want.code || st.Message() != want.msg {
		t.Fatalf("got %v (%T), want status %v %q", got, got, want.code, want.msg)
	}
	if !errors.Is(got, in) {
		t.Errorf("got errors.Is(%v, %v) false, want true", got, in)
	}
	if s := got.Error(); s != st.Err().Error() {
		t.Errorf("got Error() %q, want %q as grpc's own status errors read", s, st.Err().Error())
	}
}

func TestCallError(t *testing.T) {
	if err := callError(nil); err != nil {
		t.Fatalf("callError(nil): got %v, want nil", err)
	}
	failed := bufferFailure(t, errTest)
	brokenByPanic := bufferFailure(t, boom)
	notFound := status.Error(codes.NotFound, "no such service")
	tests := []struct {
		name string
		err  error
		want mapping
	}{
		{"overloaded", loadshed.ErrOverloaded, mapping{codes.ResourceExhausted, "service overloaded", false}},
		{"wrapped overloaded", fmt.Errorf("retry: %w", loadshed.ErrOverloaded), mapping{codes.ResourceExhausted, "retry: service overloaded", false}},
		{"elapsed", timeout.ErrElapsed, mapping{codes.DeadlineExceeded, "request timed out", false}},
		{"wrapped elapsed", fmt.Errorf("hedge: %w", timeout.ErrElapsed), mapping{codes.DeadlineExceeded, "hedge: request timed out", false}},
		{"buffer closed", buffer.ErrClosed, mapping{codes.Unavailable, "buffer's worker closed unexpectedly", false}},
		{"wrapped buffer closed", fmt.Errorf("x: %w", buffer.ErrClosed), mapping{codes.Unavailable, "x: buffer's worker closed unexpectedly", false}},
		{"buffer failed", failed, mapping{codes.Unavailable, "buffered service failed: test error", false}},
		{"canceled", context.Canceled, mapping{codes.Canceled, "context canceled", false}},
		{"deadline", context.DeadlineExceeded, mapping{codes.DeadlineExceeded, "context deadline exceeded", false}},
		{"wrapped canceled", fmt.Errorf("db: %w", context.Canceled), mapping{codes.Canceled, "db: context canceled", false}},
		{"wrapped deadline", fmt.Errorf("db: %w", context.DeadlineExceeded), mapping{codes.DeadlineExceeded, "db: context deadline exceeded", false}},
		{"status", notFound, mapping{same: true}},
		{"wrapped status", fmt.Errorf("lookup: %w", notFound), mapping{same: true}},
		{"status over a tower error", &statusError{st: status.New(codes.Aborted, "x"), err: loadshed.ErrOverloaded}, mapping{same: true}},
		{"plain error", errTest, mapping{same: true}},
		{"panic", boom, mapping{codes.Internal, "tower: panic in a test's goroutine: boom", false}},
		{"panic with a status", panicWith(notFound), mapping{codes.Internal, "tower: panic in a test's goroutine: rpc error: code = NotFound desc = no such service", false}},
		{"panic with a tower error", panicWith(loadshed.ErrOverloaded), mapping{codes.Internal, "tower: panic in a test's goroutine: service overloaded", false}},
		{"wrapped panic", fmt.Errorf("x: %w", boom), mapping{codes.Internal, "x: tower: panic in a test's goroutine: boom", false}},
		{"buffer a panic broke", brokenByPanic, mapping{codes.Unavailable, "buffered service failed: tower: panic in a test's goroutine: boom", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMapping(t, tt.err, callError(tt.err), tt.want)
		})
	}
}

// boom is the PanicError of a panic with "boom".
var boom = panicWith("boom")

func panicWith(v any) error {
	return &tower.PanicError{Where: "a test's goroutine", Value: v}
}

func TestReadyError(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel()
	live := t.Context()
	notFound := status.Error(codes.NotFound, "no such service")
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want mapping
	}{
		{"caller cancelled", canceled, context.Canceled, mapping{codes.Canceled, "context canceled", false}},
		{"caller's deadline", expired, context.DeadlineExceeded, mapping{codes.DeadlineExceeded, "context deadline exceeded", false}},
		// A context error that is not the caller's is the stack's failure.
		{"another context's error", live, context.DeadlineExceeded, mapping{codes.Unavailable, "context deadline exceeded", false}},
		{"another context's cancellation", live, context.Canceled, mapping{codes.Unavailable, "context canceled", false}},
		{"broken", live, errTest, mapping{codes.Unavailable, "test error", false}},
		{"buffer closed", live, buffer.ErrClosed, mapping{codes.Unavailable, "buffer's worker closed unexpectedly", false}},
		{"overloaded", live, loadshed.ErrOverloaded, mapping{codes.Unavailable, "service overloaded", false}},
		{"status", live, notFound, mapping{same: true}},
		{"panic", live, boom, mapping{codes.Unavailable, "tower: panic in a test's goroutine: boom", false}},
		{"panic with a status", live, panicWith(notFound), mapping{codes.Unavailable, "tower: panic in a test's goroutine: rpc error: code = NotFound desc = no such service", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMapping(t, tt.err, readyError(tt.ctx, tt.err), tt.want)
		})
	}
}

// Shedding a request, timing one out and a caller going away cost no
// allocation for the error.
func TestSentinelErrorsDoNotAllocate(t *testing.T) {
	for _, err := range []error{loadshed.ErrOverloaded, timeout.ErrElapsed, buffer.ErrClosed, context.Canceled, context.DeadlineExceeded} {
		if n := testing.AllocsPerRun(100, func() { sink = callError(err) }); n != 0 {
			t.Errorf("callError(%v): got %v allocations, want 0", err, n)
		}
	}
}

var sink error

// behaviour is an error of a user's own that answers one of the methods
// the interceptors ask, as it is told to, and may wrap another.
type behaviour struct {
	method string // "Overloaded", "Timeout", "Unavailable" or "Throttled"
	answer bool
	inner  error
}

func (b behaviour) Error() string {
	if b.inner != nil {
		return b.method + ": " + b.inner.Error()
	}
	return b.method
}
func (b behaviour) Unwrap() error { return b.inner }

type overloadedErr struct{ behaviour }
type timeoutErr struct{ behaviour }
type unavailableErr struct{ behaviour }
type throttledErr struct{ behaviour }

func (e overloadedErr) Overloaded() bool   { return e.answer }
func (e timeoutErr) Timeout() bool         { return e.answer }
func (e unavailableErr) Unavailable() bool { return e.answer }
func (e throttledErr) Throttled() bool     { return e.answer }

// An error of a user's own maps by what it answers, as the library's do,
// in the order of the table in the package doc.
func TestCallErrorByBehaviour(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want mapping
	}{
		{"overloaded", overloadedErr{behaviour{"Overloaded", true, nil}}, mapping{codes.ResourceExhausted, "Overloaded", false}},
		{"timeout", timeoutErr{behaviour{"Timeout", true, nil}}, mapping{codes.DeadlineExceeded, "Timeout", false}},
		{"unavailable", unavailableErr{behaviour{"Unavailable", true, nil}}, mapping{codes.Unavailable, "Unavailable", false}},
		{"throttled", throttledErr{behaviour{"Throttled", true, nil}}, mapping{codes.ResourceExhausted, "Throttled", false}},
		{"wrapped throttled", fmt.Errorf("quota: %w", throttledErr{behaviour{"Throttled", true, nil}}), mapping{codes.ResourceExhausted, "quota: Throttled", false}},
		{"answers false", overloadedErr{behaviour{"Overloaded", false, loadshed.ErrOverloaded}}, mapping{same: true}},
		{"overloaded over a timeout", overloadedErr{behaviour{"Overloaded", true, timeout.ErrElapsed}}, mapping{codes.ResourceExhausted, "Overloaded: request timed out", false}},
		{"unavailable over a layer's timeout", unavailableErr{behaviour{"Unavailable", true, timeout.ErrElapsed}}, mapping{codes.DeadlineExceeded, "Unavailable: request timed out", false}},
		{"unavailable over a context's deadline", unavailableErr{behaviour{"Unavailable", true, context.DeadlineExceeded}}, mapping{codes.Unavailable, "Unavailable: context deadline exceeded", false}},
		{"throttled over a context's deadline", throttledErr{behaviour{"Throttled", true, context.DeadlineExceeded}}, mapping{codes.ResourceExhausted, "Throttled: context deadline exceeded", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMapping(t, tt.err, callError(tt.err), tt.want)
		})
	}
}
