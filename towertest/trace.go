package towertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/towergo/tower/metrics"
)

// A TraceRecorder is a [metrics.Tracer] that keeps what it hears as
// lines, with times measured from its making: under testing/synctest they
// are exact virtual durations. Give it to a request with
// metrics.WithTracer. It is safe for concurrent use. Its zero value is not
// usable; call [NewTraceRecorder].
type TraceRecorder struct {
	start time.Time

	mu    sync.Mutex
	lines []string
}

// NewTraceRecorder returns an empty TraceRecorder whose clock starts now.
func NewTraceRecorder() *TraceRecorder {
	return &TraceRecorder{start: time.Now()}
}

// attemptKey is the context key of the attempt a TraceRecorder started.
type attemptKey struct{ r *TraceRecorder }

// Waited records "KIND wait FROM..TO", and " err=ERR" if w.Err is not nil:
// "queue wait 0s..30ms".
func (r *TraceRecorder) Waited(_ context.Context, w metrics.Wait) {
	from := w.Start.Sub(r.start)
	r.add(withErr(fmt.Sprintf("%v wait %v..%v", w.Kind, from, from+w.Duration), w.Err))
}

// StartAttempt records "KIND N start AT delay=DELAY", and " cause=ERR" if
// a.Cause is not nil: "retry 2 start 0s delay=10ms cause=unavailable". It
// returns ctx with a in it, for [TraceRecorder.Attempt] and EndAttempt.
func (r *TraceRecorder) StartAttempt(ctx context.Context, a metrics.Attempt) context.Context {
	line := fmt.Sprintf("%v %d start %v delay=%v", a.Kind, a.N, time.Since(r.start), a.Delay)
	if a.Cause != nil {
		line += fmt.Sprintf(" cause=%v", a.Cause)
	}
	r.add(line)
	return context.WithValue(ctx, attemptKey{r}, a)
}

// EndAttempt records "KIND N end AT", and " err=ERR" if err is not nil,
// for the attempt ctx carries: "retry 2 end 25ms". A ctx that carries no
// attempt of r's is recorded as "? 0 end AT".
func (r *TraceRecorder) EndAttempt(ctx context.Context, err error) {
	a, _ := r.Attempt(ctx)
	kind := "?"
	if a.Kind != 0 {
		kind = a.Kind.String()
	}
	r.add(withErr(fmt.Sprintf("%s %d end %v", kind, a.N, time.Since(r.start)), err))
}

// Attempt returns the attempt whose context ctx is, or is derived from, as
// StartAttempt returned it: a test's way to check that what an attempt
// sends runs under its context. It reports false for any other ctx.
func (r *TraceRecorder) Attempt(ctx context.Context) (metrics.Attempt, bool) {
	a, ok := ctx.Value(attemptKey{r}).(metrics.Attempt)
	return a, ok
}

// Lines returns the lines recorded so far, in order.
func (r *TraceRecorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

func (r *TraceRecorder) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
}

// withErr returns line, with " err=ERR" if err is not nil.
func withErr(line string, err error) string {
	if err != nil {
		line += fmt.Sprintf(" err=%v", err)
	}
	return line
}

var _ metrics.Tracer = (*TraceRecorder)(nil)
