package stack_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/filter"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/throttle"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// tag is a layer that appends s to each request, so that a request that
// went through a stack of tags spells out their order.
func tag(s string) tower.Layer[string, string] {
	return tower.MapRequestLayer[string, string](func(req string) string { return req + s })
}

// through sends "" through svc, built over echo, and returns what came
// back: the tags of the layers it crossed, outermost first.
func through(t *testing.T, svc tower.Service[string, string]) string {
	t.Helper()
	rsp, err := tower.Call(t.Context(), svc, "")
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	return rsp
}

// The first layer added sees the request first, whichever method added it.
func TestFirstAddedIsOutermost(t *testing.T) {
	svc := stack.New[string, string]().
		Layer(tag("a")).
		Timeout(time.Second).
		Layer(tag("b")).
		Filter(func(req string) (string, error) { return req + "f", nil }).
		Layer(tag("c")).
		ServiceFunc(echo)
	if got := through(t, svc); got != "abfc" {
		t.Errorf("the request crossed %q, want %q", got, "abfc")
	}
}

// Extending a Builder leaves it as it was, and Builders extended from one
// do not see each other's layers, however much room the slice they share
// has left.
func TestBuilderIsImmutable(t *testing.T) {
	base := stack.New[string, string]().Layer(tag("a")).Layer(tag("b")).Layer(tag("c"))
	x := base.Layer(tag("x"))
	y := base.Layer(tag("y"))
	for _, tt := range []struct {
		b    stack.Builder[string, string]
		want string
	}{{base, "abc"}, {x, "abcx"}, {y, "abcy"}} {
		if got := through(t, tt.b.ServiceFunc(echo)); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// The zero Builder, and an empty one, wrap a service in nothing.
func TestEmptyBuilder(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	var zero stack.Builder[string, string]
	for _, b := range []stack.Builder[string, string]{zero, stack.New[string, string]()} {
		if got := b.Service(mock); got != tower.Service[string, string](mock) {
			t.Errorf("got %T, want the service itself", got)
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// Each method adds its package's layer, with the arguments as given: the
// service it builds is of the type the layer built by hand makes, and the
// stacks built from the same layers are alike in type, layer by layer,
// which the benchmark then measures.
func TestMethodsAddTheirPackagesLayer(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	sem := limit.NewSemaphore(1)
	var sink metrics.Counts
	pred := func(req string) (string, error) { return req, nil }
	asyncPred := func(_ context.Context, req string) (string, error) { return req, nil }
	policy := retry.NewPolicy[string, string](retry.AnyError)
	b := stack.New[string, string]()
	for _, tt := range []struct {
		name          string
		built, byHand tower.Layer[string, string]
	}{
		{"Timeout", b.Timeout(time.Second), timeout.NewLayer[string, string](time.Second)},
		{"ConcurrencyLimit", b.ConcurrencyLimit(1), limit.NewConcurrencyLayer[string, string](1)},
		{"SharedConcurrencyLimit", b.SharedConcurrencyLimit(sem), limit.NewSharedConcurrencyLayer[string, string](sem)},
		{"AdaptiveLimit", b.AdaptiveLimit(adaptive.Gradient2()), adaptive.NewLayer[string, string](adaptive.Gradient2())},
		{"RateLimit", b.RateLimit(1, time.Second), limit.NewRateLayer[string, string](1, time.Second)},
		{"LoadShed", b.LoadShed(), loadshed.NewLayer[string, string]()},
		{"Buffer", b.Buffer(1), buffer.NewLayer[string, string](1)},
		{"Retry", b.Retry(retry.AnyError), retry.NewLayer(policy)},
		{"RetryWith", b.RetryWith(retry.AnyError, nil), retry.NewLayer(policy)},
		{"RetryPolicy", b.RetryPolicy(policy), retry.NewLayer(policy)},
		{"Hedge", b.Hedge(hedge.Idempotent[string]{}, 1, 0.5, time.Second), hedge.NewLayer[string, string](hedge.Idempotent[string]{}, 1, 0.5, time.Second)},
		{"CircuitBreaker", b.CircuitBreaker(breaker.AnyError), breaker.NewLayer[string, string](breaker.AnyError)},
		{"Throttle", b.Throttle(throttle.NotOverloaded), throttle.NewLayer[string, string](throttle.NotOverloaded)},
		{"Filter", b.Filter(pred), filter.NewLayer[string, string](pred)},
		{"AsyncFilter", b.AsyncFilter(asyncPred), filter.NewAsyncLayer[string, string](asyncPred)},
		{"Metrics", b.Metrics(&sink), metrics.NewLayer[string, string](&sink)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, want := tt.built.Wrap(mock), tt.byHand.Wrap(mock)
			if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
				t.Errorf("built a %T, want a %T", got, want)
			}
			closeIfCloser(t, tt.built)
			closeIfCloser(t, tt.byHand)
		})
	}
}

func closeIfCloser(t *testing.T, v any) {
	t.Helper()
	if c, ok := v.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// Bad input panics at once, naming what was wrong: a nil layer or
// service here, and the rest in the middleware's constructor, whose
// message names the parameter by the name the method gives it.
func TestBadInputPanics(t *testing.T) {
	b := stack.New[string, string]()
	sec := time.Second
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"Layer/nil", func() { b.Layer(nil) }, "stack.Builder.Layer: nil Layer"},
		{"Layer/typed nil", func() { b.Layer((*buffer.Layer[string, string])(nil)) }, "stack.Builder.Layer: nil Layer"},
		{"Service/nil", func() { b.Service(nil) }, "stack.Builder.Service: nil Service"},
		{"Service/typed nil", func() { b.Timeout(sec).Service((*towertest.Mock[string, string])(nil)) }, "stack.Builder.Service: nil Service"},
		{"Wrap/nil", func() { b.Wrap(nil) }, "stack.Builder.Service: nil Service"},
		{"ServiceFunc/nil", func() { b.ServiceFunc(nil) }, "stack.Builder.ServiceFunc: nil func"},
		{"Timeout/d", func() { b.Timeout(-sec) }, "timeout.NewLayer: duration d must be positive, got -1s"},
		{"Timeout/option", func() { b.Timeout(sec, nil) }, "timeout.NewLayer: option 0 is nil"},
		{"ConcurrencyLimit/max", func() { b.ConcurrencyLimit(0) }, "limit.NewConcurrencyLayer: max must be between 1 and 4294967295, got 0"},
		{"SharedConcurrencyLimit/sem", func() { b.SharedConcurrencyLimit(nil) }, "limit.NewSharedConcurrencyLayer: sem is nil"},
		{"AdaptiveLimit/newAlg", func() { b.AdaptiveLimit(nil) }, "adaptive.NewLayer: newAlg is nil"},
		{"AdaptiveLimit/option", func() { b.AdaptiveLimit(adaptive.Gradient2(), adaptive.WithInitial(300)) }, "adaptive.NewLayer: initial limit 300 is outside the bounds [1, 200]"},
		{"RateLimit/num", func() { b.RateLimit(0, sec) }, "limit.NewRateLayer: num must be between 1 and 1099511627775, got 0"},
		{"RateLimit/per", func() { b.RateLimit(1, 0) }, "limit.NewRateLayer: per must be positive, got 0s"},
		{"LoadShed/option", func() { b.LoadShed(nil) }, "loadshed.NewLayer: option 0 is nil"},
		{"Buffer/bound", func() { b.Buffer(0) }, "buffer.NewLayer: bound must be between 1 and 4294967295, got 0"},
		{"Retry/retryable", func() { b.Retry(nil) }, "retry.NewPolicy: nil retryable"},
		{"Retry/option", func() { b.Retry(retry.AnyError, nil) }, "retry.NewPolicy: option 0 is nil"},
		{"RetryWith/option", func() { b.RetryWith(retry.AnyError, nil, nil) }, "retry.NewLayer: option 0 is nil"},
		{"RetryPolicy/policy", func() { b.RetryPolicy(nil) }, "retry.NewLayer: nil policy"},
		{"Hedge/policy", func() { b.Hedge(nil, 1, 0.5, sec) }, "hedge.NewLayer: nil policy"},
		{"Hedge/percentile", func() { b.Hedge(hedge.Idempotent[string]{}, 1, 2, sec) }, "hedge.NewLayer: percentile must be between 0 and 1, got 2"},
		{"CircuitBreaker/failure", func() { b.CircuitBreaker(nil) }, "breaker.NewLayer: nil failure classifier"},
		{"CircuitBreaker/option", func() { b.CircuitBreaker(breaker.AnyError, breaker.WithProbes(0)) }, "breaker.WithProbes: n must be at least 1, got 0"},
		{"Throttle/accepted", func() { b.Throttle(nil) }, "throttle.NewLayer: nil accepted classifier"},
		{"Throttle/option", func() { b.Throttle(throttle.NotOverloaded, throttle.WithK(0.5)) }, "throttle.WithK: k must be a finite number at least 1, got 0.5"},
		{"Filter/pred", func() { b.Filter(nil) }, "filter.NewLayer: nil predicate"},
		{"AsyncFilter/pred", func() { b.AsyncFilter(nil) }, "filter.NewAsyncLayer: nil predicate"},
		{"Metrics/sink", func() { b.Metrics(nil) }, "metrics.NewLayer: nil sink"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// Stacks built by the builder keep the readiness contract, a Builder with
// a Buffer included: the suite closes it as it closes any layer with a
// Close method.
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    func() stack.Builder[string, string]
	}{
		{"Timeout>Retry>ConcurrencyLimit>RateLimit", func() stack.Builder[string, string] {
			return stack.New[string, string]().
				Timeout(time.Second).
				Retry(retry.AnyError).
				ConcurrencyLimit(2).
				RateLimit(100, time.Second)
		}},
		{"Metrics>Buffer>Timeout>Filter>ConcurrencyLimit", func() stack.Builder[string, string] {
			return stack.New[string, string]().
				Metrics(new(metrics.Counts)).
				Buffer(4).
				Timeout(time.Second).
				Filter(func(req string) (string, error) { return req, nil }).
				ConcurrencyLimit(2)
		}},
		{"BuilderInBuilder", func() stack.Builder[string, string] {
			return stack.New[string, string]().Layer(stack.New[string, string]().Buffer(2)).ConcurrencyLimit(1)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] { return tt.b() },
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}

// The stack answers as its layers say, in virtual time: the Timeout above
// the Retry bounds every attempt together.
func TestTimeoutAboveRetryBoundsEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := stack.New[string, string]().
			Timeout(150*time.Millisecond).
			Retry(retry.AnyError, retry.WithMaxAttempts(5)).
			ConcurrencyLimit(1).
			Service(mock)
		call := towertest.GoRequest(t.Context(), svc, "hello")
		time.Sleep(100 * time.Millisecond)
		h.ExpectSettled(t, "hello").Fail(fmt.Errorf("attempt 1 failed"))
		h.ExpectSettled(t, "hello") // the retry, left unanswered
		call.ExpectError(t, timeout.ErrElapsed)
		call.ExpectElapsed(t, 150*time.Millisecond)
		h.ExpectIdle(t, 2)
	})
}

// A Builder is a Layer: a built stack nests inside another, in place.
func TestBuilderIsALayer(t *testing.T) {
	inner := stack.New[string, string]().Layer(tag("b")).Layer(tag("c"))
	outer := stack.New[string, string]().Layer(tag("a")).Layer(inner).Layer(tag("d"))
	if got := through(t, outer.ServiceFunc(echo)); got != "abcd" {
		t.Errorf("got %q, want %q", got, "abcd")
	}
}
