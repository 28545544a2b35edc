package tower

import (
	"context"
	"fmt"
	"strings"
)

// A Priority says how much a request matters when a service is near its
// capacity: middleware that admits requests (package adaptive's limit)
// serves higher priorities first and sheds lower ones first, without
// starving any. It travels in the request's context ([WithPriority],
// [PriorityFrom]). The zero Priority is [PriorityNormal].
type Priority int8

const (
	// PriorityLow is for work that may be shed first: prefetches, batch
	// jobs, retries of background work.
	PriorityLow Priority = -1
	// PriorityNormal is the zero value, the priority of an unmarked
	// request.
	PriorityNormal Priority = 0
	// PriorityCritical is for requests that must get through while others
	// are shed: a user waiting, a health check.
	PriorityCritical Priority = 1
)

// NumPriorities is the number of priorities. Priority p is one of them if
// PriorityLow <= p <= PriorityCritical; p - PriorityLow numbers them from 0.
const NumPriorities = int(PriorityCritical-PriorityLow) + 1

var priorityNames = [NumPriorities]string{"low", "normal", "critical"}

// String returns the priority's name, "low", "normal" or "critical", or
// "Priority(n)" for a value that is not one of the constants.
func (p Priority) String() string {
	if p.valid() {
		return priorityNames[p-PriorityLow]
	}
	return fmt.Sprintf("Priority(%d)", int8(p))
}

func (p Priority) valid() bool { return p >= PriorityLow && p <= PriorityCritical }

// ParsePriority returns the priority named s, as [Priority.String] names
// it, in any case: "low", "normal" or "critical". For any other string it
// returns PriorityNormal and an error.
func ParsePriority(s string) (Priority, error) {
	for i, name := range priorityNames {
		if strings.EqualFold(s, name) {
			return Priority(i) + PriorityLow, nil
		}
	}
	return PriorityNormal, fmt.Errorf("tower.ParsePriority: unknown priority %q, want low, normal or critical", s)
}

type priorityKey struct{}

// WithPriority returns a copy of ctx that carries priority p. It panics if
// p is not one of the Priority constants.
func WithPriority(ctx context.Context, p Priority) context.Context {
	if !p.valid() {
		panic(fmt.Sprintf("tower.WithPriority: p must be PriorityLow, PriorityNormal or PriorityCritical, got %d", int8(p)))
	}
	if _, ok := ctx.Value(priorityKey{}).(marked); ok {
		return context.WithValue(ctx, priorityKey{}, marked(p)) // keep the mark
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom returns the priority ctx carries, or PriorityNormal if it
// carries none.
func PriorityFrom(ctx context.Context) Priority {
	switch p := ctx.Value(priorityKey{}).(type) {
	case Priority:
		return p
	case marked:
		return Priority(p)
	}
	return PriorityNormal
}
