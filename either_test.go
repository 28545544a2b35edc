package tower_test

import (
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// The choice is made when the service is built, and the chosen service is
// returned itself: its requests reach it, and the other sees none.
func TestEither(t *testing.T) {
	for _, useLeft := range []bool{true, false} {
		t.Run(map[bool]string{true: "left", false: "right"}[useLeft], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				left, lh := towertest.NewMock[string, string]()
				right, rh := towertest.NewMock[string, string]()
				svc := tower.Either[string, string](useLeft, left, right)
				want, chosen, other := tower.Service[string, string](left), lh, rh
				if !useLeft {
					want, chosen, other = right, rh, lh
				}
				if svc != want {
					t.Errorf("got %p, want the chosen service itself, %p", svc, want)
				}
				wait := towertest.GoRequest(t.Context(), svc, "hello").Wait
				chosen.ExpectNow(t, "hello").Respond("world")
				if res, err := wait(); res != "world" || err != nil {
					t.Errorf("got %q, %v; want %q, nil", res, err, "world")
				}
				if n := other.Calls(); n != 0 {
					t.Errorf("the service not chosen got %d calls, want 0", n)
				}
			})
		})
	}
}

// EitherLayer returns the chosen layer itself.
func TestEitherLayer(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	upper := tower.MapResponseLayer[string](func(s string) string { return s + "!" })
	identity := tower.OptionalLayer[string, string](nil)
	if got := tower.EitherLayer(false, upper, identity).Wrap(mock); got != tower.Service[string, string](mock) {
		t.Errorf("right (identity): got %p, want the mock itself, %p", got, mock)
	}
	svc := tower.EitherLayer(true, upper, identity).Wrap(tower.ServiceFunc[string, string](echo))
	if res, err := tower.Call(t.Context(), svc, "hi"); res != "hi!" || err != nil {
		t.Errorf("left: got %q, %v; want %q, nil", res, err, "hi!")
	}
}

func TestEitherConformance(t *testing.T) {
	mapped := func() tower.Layer[string, string] {
		return tower.MapResultLayer[string](func(r string, err error) (string, error) { return r, err })
	}
	for _, useLeft := range []bool{true, false} {
		t.Run(map[bool]string{true: "left", false: "right"}[useLeft], func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] {
					return tower.EitherLayer(useLeft, mapped(), tower.OptionalLayer[string, string](nil))
				},
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}
