package isnil_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerotel/internal/isnil"
)

type ptrService struct{}

func (*ptrService) Ready(context.Context) (tower.Permit[int, int], error) {
	return tower.Permit[int, int]{}, nil
}

func TestIs(t *testing.T) {
	var (
		nilPtr  *ptrService
		nilFunc tower.ServiceFunc[int, int]
		nilMap  map[string]int
		nilChan chan int
	)
	for _, tt := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil interface", nil, true},
		{"typed nil pointer", tower.Service[int, int](nilPtr), true},
		{"nil ServiceFunc", tower.Service[int, int](nilFunc), true},
		{"nil map", nilMap, false},
		{"nil chan", nilChan, true},
		{"nil slice", []int(nil), false},
		{"empty Stack", tower.Stack[int, int](), false},
		{"pointer", &ptrService{}, false},
		{"func", tower.ServiceFunc[int, int](func(context.Context, int) (int, error) { return 0, nil }), false},
		{"struct value", struct{}{}, false},
		{"zero int", 0, false},
	} {
		if got := isnil.Is(tt.v); got != tt.want {
			t.Errorf("%s: Is = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func ExampleIs() {
	var svc *ptrService
	var asService tower.Service[int, int] = svc
	//lint:ignore SA4023 the example shows that this comparison is false: that is why Is exists.
	fmt.Println(asService == nil, isnil.Is(asService))
	// Output: false true
}
