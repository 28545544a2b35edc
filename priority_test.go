package tower_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

func TestPriority(t *testing.T) {
	if got := tower.PriorityFrom(context.Background()); got != tower.PriorityNormal {
		t.Errorf("PriorityFrom(unmarked) = %v, want normal", got)
	}
	var zero tower.Priority
	if zero != tower.PriorityNormal {
		t.Errorf("zero Priority is %v, want normal", zero)
	}
	// The values are the contract: they order the priorities, and a
	// priority less PriorityLow numbers them from 0.
	if got := [...]int{int(tower.PriorityLow), int(tower.PriorityNormal), int(tower.PriorityCritical), tower.NumPriorities}; got != [...]int{-1, 0, 1, 3} {
		t.Errorf("PriorityLow, PriorityNormal, PriorityCritical, NumPriorities = %v, want [-1 0 1 3]", got)
	}
	for _, p := range []tower.Priority{tower.PriorityLow, tower.PriorityNormal, tower.PriorityCritical} {
		ctx := tower.WithPriority(context.Background(), p)
		if got := tower.PriorityFrom(ctx); got != p {
			t.Errorf("PriorityFrom(WithPriority(%v)) = %v", p, got)
		}
		q, err := tower.ParsePriority(p.String())
		if err != nil || q != p {
			t.Errorf("ParsePriority(%q) = %v, %v; want %v, nil", p.String(), q, err, p)
		}
	}
	if got := tower.Priority(7).String(); got != "Priority(7)" {
		t.Errorf("got %q, want Priority(7)", got)
	}
	if p, err := tower.ParsePriority("CRITICAL"); err != nil || p != tower.PriorityCritical {
		t.Errorf("ParsePriority(CRITICAL) = %v, %v", p, err)
	}
	if p, err := tower.ParsePriority("urgent"); p != tower.PriorityNormal || err == nil || err.Error() != `tower.ParsePriority: unknown priority "urgent", want low, normal or critical` {
		t.Errorf("ParsePriority(urgent) = %v, %v; want normal and the error", p, err)
	}
	towertest.Panics(t, "tower.WithPriority: p must be PriorityLow, PriorityNormal or PriorityCritical, got 2", func() {
		tower.WithPriority(context.Background(), 2)
	})
}

func ExampleWithPriority() {
	ctx := tower.WithPriority(context.Background(), tower.PriorityLow)
	fmt.Println(tower.PriorityFrom(ctx), tower.PriorityFrom(context.Background()))
	// Output: low normal
}

func ExampleParsePriority() {
	p, err := tower.ParsePriority("critical") // from a header, say
	fmt.Println(p, err)
	// Output: critical <nil>
}

// ReadyNowFor hands Ready a done context that carries the request's
// priority and nothing else; ReadyNow's carries nothing. Neither
// allocates.
func TestReadyNowForCarriesPriority(t *testing.T) {
	type otherKey struct{}
	var seen tower.Priority
	var other any
	var done bool
	svc := tower.ServiceFunc[int, int](nil)
	probe := readyFunc[int, int](func(ctx context.Context) (tower.Permit[int, int], error) {
		seen, other, done = tower.PriorityFrom(ctx), ctx.Value(otherKey{}), ctx.Err() != nil
		return svc.Ready(ctx)
	})
	for _, p := range []tower.Priority{tower.PriorityLow, tower.PriorityNormal, tower.PriorityCritical} {
		ctx := context.WithValue(tower.WithPriority(t.Context(), p), otherKey{}, "x")
		if _, ok, err := tower.ReadyNowFor(ctx, probe); !ok || err != nil {
			t.Fatalf("ReadyNowFor: %v, %v", ok, err)
		}
		if seen != p || other != nil || !done {
			t.Errorf("ReadyNowFor with %v: Ready saw priority %v, other value %v, done %v; want %v, nil, true", p, seen, other, done, p)
		}
		if _, _, err := tower.ReadyNow(probe); err != nil {
			t.Fatal(err)
		}
		if seen != tower.PriorityNormal || !done {
			t.Errorf("ReadyNow: Ready saw priority %v, done %v; want normal, true", seen, done)
		}
	}
	ctx := tower.WithPriority(t.Context(), tower.PriorityLow)
	if n := testing.AllocsPerRun(100, func() { tower.ReadyNowFor(ctx, svc) }); n != 0 {
		t.Errorf("ReadyNowFor allocates %v times, want 0", n)
	}
}

// readyFunc is a service whose Ready is f.
type readyFunc[Req, Res any] func(ctx context.Context) (tower.Permit[Req, Res], error)

func (f readyFunc[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	return f(ctx)
}

// With a value set by WithReadyValue, ReadyNowFor's done context carries
// every value of the request's context, its priority among them.
func TestReadyNowForCarriesReadyValues(t *testing.T) {
	type key struct{}
	type otherKey struct{}
	var seen tower.Priority
	var v, other any
	var done bool
	svc := tower.ServiceFunc[int, int](nil)
	probe := readyFunc[int, int](func(ctx context.Context) (tower.Permit[int, int], error) {
		seen, v, other, done = tower.PriorityFrom(ctx), ctx.Value(key{}), ctx.Value(otherKey{}), ctx.Err() != nil
		return svc.Ready(ctx)
	})
	ctx := context.WithValue(tower.WithPriority(t.Context(), tower.PriorityCritical), otherKey{}, "x")
	ctx = tower.WithReadyValue(ctx, key{}, 7)
	if _, ok, err := tower.ReadyNowFor(ctx, probe); !ok || err != nil {
		t.Fatalf("ReadyNowFor: %v, %v", ok, err)
	}
	if seen != tower.PriorityCritical || v != 7 || other != "x" || !done {
		t.Errorf("Ready saw priority %v, values %v and %v, done %v; want critical, 7, x, true", seen, v, other, done)
	}
	if got := ctx.Value(key{}); got != 7 {
		t.Errorf("the context's own value: %v, want 7", got)
	}
	// A priority set under the value: Ready sees both.
	low := tower.WithPriority(ctx, tower.PriorityLow)
	if _, ok, err := tower.ReadyNowFor(low, probe); !ok || err != nil {
		t.Fatalf("ReadyNowFor: %v, %v", ok, err)
	}
	if seen != tower.PriorityLow || v != 7 || !done {
		t.Errorf("under WithPriority(low): Ready saw priority %v, value %v, done %v; want low, 7, true", seen, v, done)
	}
	if got := tower.PriorityFrom(low); got != tower.PriorityLow {
		t.Errorf("PriorityFrom under WithPriority(low): %v", got)
	}
	// A value set with no priority: normal.
	if _, ok, err := tower.ReadyNowFor(tower.WithReadyValue(t.Context(), key{}, 8), probe); !ok || err != nil || seen != tower.PriorityNormal || v != 8 {
		t.Errorf("a value and no priority: ready %v, %v; Ready saw %v and %v, want normal and 8", ok, err, seen, v)
	}
	defer func() {
		if r := recover(); r != "tower.WithReadyValue: nil key" {
			t.Errorf("nil key: recovered %v", r)
		}
	}()
	tower.WithReadyValue(ctx, nil, 1)
}
