package tower_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// The machinery shared by every combinator: pooled permit records, stale
// copies, panics in f, allocations, and the benchmark of each combinator.

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// intSink keeps the benchmarks' results alive.
var intSink int

// raceEnabled is set by race_test.go when the race detector is on.
var raceEnabled bool

// combinators builds each combinator over inner with an f that changes
// nothing, so that a test can run the same checks over all of them. The
// type-changing ones go int -> string -> int and back.
func combinators(inner tower.Service[int, int]) map[string]tower.Service[int, int] {
	same := func(r int) int { return r }
	return map[string]tower.Service[int, int]{
		"MapRequest": tower.MapRequest(inner, same),
		"MapRequest x2, int->string->int": tower.MapRequest(
			tower.MapRequest(inner, func(s string) int { n, _ := strconv.Atoi(s); return n }),
			func(n int) string { return strconv.Itoa(n) }),
		"MapResponse": tower.MapResponse(inner, same),
		"MapResponse x2, int->bool->int": tower.MapResponse(
			tower.MapResponse(inner, func(n int) bool { return n == 1 }),
			func(b bool) int {
				if b {
					return 1
				}
				return 0
			}),
		"MapErr":    tower.MapErr(inner, func(err error) error { return err }),
		"MapResult": tower.MapResult(inner, func(r int, err error) (int, error) { return r, err }),
		"AndThen":   tower.AndThen(inner, func(_ context.Context, r int) (int, error) { return r, nil }),
		"Then":      tower.Then(inner, func(_ context.Context, r int, err error) (int, error) { return r, err }),
	}
}

// Issuing and using a combinator's permit allocates nothing once its pool is
// warm, whether the combinator keeps the types or changes them.
func TestCombinatorsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("with the race detector on, sync.Pool drops a quarter of the records put back, at random")
	}
	for name, svc := range combinators(echoInt) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			allocs := testing.AllocsPerRun(100, func() {
				p, _ := svc.Ready(ctx)
				intSink, _ = p.Call(ctx, 1)
				q, _ := svc.Ready(ctx)
				q.Release()
			})
			if allocs != 0 {
				t.Errorf("Ready + Call and Ready + Release: got %v allocations, want 0", allocs)
			}
		})
	}
}

// Every combinator passes readiness through: its permit holds the inner
// reservation, which a release gives back and a call uses up; a second call
// panics and a stale copy is refused, even after its record has been reused
// by the next permit.
func TestCombinatorPermits(t *testing.T) {
	mock, h := towertest.NewMock[int, int]()
	for name, svc := range combinators(mock) {
		t.Run(name, func(t *testing.T) {
			p1 := towertest.MustReady(t, svc)
			if n := h.Outstanding(); n != 1 {
				t.Fatalf("after Ready: inner has %d reservations outstanding, want 1", n)
			}
			stale := p1
			p1.Release()
			if n := h.Outstanding(); n != 0 {
				t.Fatalf("after Release: inner has %d reservations outstanding, want 0", n)
			}
			p2, _ := svc.Ready(t.Context()) // likely reuses p1's record
			stale.Release()
			if n := h.Outstanding(); n != 1 {
				t.Errorf("a stale copy's Release reached the next permit: inner has %d reservations outstanding, want 1", n)
			}
			mustPanicPrefix(t, "tower:", func() { stale.Call(t.Context(), 1) })
			p2.Release()
			if n, c := h.Outstanding(), h.Calls(); n != 0 || c != 0 {
				t.Errorf("got %d reservations outstanding and %d calls, want 0 and 0", n, c)
			}
		})
	}
}

// f in MapRequest runs before the inner call; if it panics, the inner
// reservation is given back all the same.
func TestMapRequestPanicReleasesInner(t *testing.T) {
	mock, h := towertest.NewMock[int, int]()
	svc := tower.MapRequest(mock, func(int) int { panic("boom") })
	p := towertest.MustReady(t, svc)
	mustPanicPrefix(t, "boom", func() { p.Call(t.Context(), 1) })
	if n, c := h.Outstanding(), h.Calls(); n != 0 || c != 0 {
		t.Errorf("got %d reservations outstanding and %d calls, want 0 and 0", n, c)
	}
}

func TestCombinatorBadInputPanics(t *testing.T) {
	var nilSvc tower.Service[int, int]
	tests := []struct {
		want string
		f    func()
	}{
		{"tower.MapRequest: nil inner service", func() { tower.MapRequest(nilSvc, func(r int) int { return r }) }},
		{"tower.MapRequest: nil f", func() { tower.MapRequest[int](echoInt, nil) }},
		{"tower.MapRequestLayer: nil f", func() { tower.MapRequestLayer[int, int](nil) }},
		{"tower.MapResponse: nil inner service", func() { tower.MapResponse(nilSvc, func(r int) int { return r }) }},
		{"tower.MapResponse: nil f", func() { tower.MapResponse[int, int, int](echoInt, nil) }},
		{"tower.MapResponseLayer: nil f", func() { tower.MapResponseLayer[int, int](nil) }},
		{"tower.MapErr: nil inner service", func() { tower.MapErr(nilSvc, func(err error) error { return err }) }},
		{"tower.MapErr: nil f", func() { tower.MapErr(echoInt, nil) }},
		{"tower.MapErrLayer: nil f", func() { tower.MapErrLayer[int, int](nil) }},
		{"tower.MapResult: nil inner service", func() {
			tower.MapResult(nilSvc, func(r int, err error) (int, error) { return r, err })
		}},
		{"tower.MapResult: nil f", func() { tower.MapResult[int, int, int](echoInt, nil) }},
		{"tower.MapResultLayer: nil f", func() { tower.MapResultLayer[int, int](nil) }},
		{"tower.AndThen: nil inner service", func() {
			tower.AndThen(nilSvc, func(_ context.Context, r int) (int, error) { return r, nil })
		}},
		{"tower.AndThen: nil f", func() { tower.AndThen[int, int, int](echoInt, nil) }},
		{"tower.AndThenLayer: nil f", func() { tower.AndThenLayer[int, int](nil) }},
		{"tower.Then: nil inner service", func() {
			tower.Then(nilSvc, func(_ context.Context, r int, err error) (int, error) { return r, err })
		}},
		{"tower.Then: nil f", func() { tower.Then[int, int, int](echoInt, nil) }},
		{"tower.ThenLayer: nil f", func() { tower.ThenLayer[int, int](nil) }},
		{"tower.Either: nil left service", func() { tower.Either(true, nilSvc, echoInt) }},
		{"tower.Either: nil right service", func() { tower.Either(true, echoInt, nilSvc) }},
		{"tower.EitherLayer: nil left layer", func() {
			tower.EitherLayer(false, nil, tower.OptionalLayer[int, int](nil))
		}},
		{"tower.EitherLayer: nil right layer", func() {
			tower.EitherLayer(true, tower.OptionalLayer[int, int](nil), nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// mustPanicPrefix fails t unless f panics with a message that starts with
// prefix.
func mustPanicPrefix(t *testing.T, prefix string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if got := fmt.Sprint(r); r == nil || len(got) < len(prefix) || got[:len(prefix)] != prefix {
			t.Errorf("got panic %v, want a message that starts %q", r, prefix)
		}
	}()
	f()
}

// errFailed is an error for tests to return and match.
var errFailed = errors.New("failed")

// BenchmarkCombinators measures the overhead per request (Ready, Call, the
// response used) of each combinator over a ServiceFunc that answers at
// once; "ServiceFunc" is that service alone.
func BenchmarkCombinators(b *testing.B) {
	services := combinators(echoInt)
	services["ServiceFunc"] = echoInt
	services["Either"] = tower.Either[int, int](true, echoInt, echoInt)
	services["OptionalLayer(nil)"] = tower.OptionalLayer[int, int](nil).Wrap(echoInt)
	for _, name := range []string{
		"ServiceFunc", "MapRequest", "MapRequest x2, int->string->int", "MapResponse", "MapResponse x2, int->bool->int",
		"MapErr", "MapResult", "AndThen", "Then", "Either", "OptionalLayer(nil)",
	} {
		svc := services[name]
		b.Run(name, func(b *testing.B) { towertest.Bench(b, svc, 1) })
	}
}
