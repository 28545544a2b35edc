package tower_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
)

// tag is a layer that appends its name to the response, so that a test can
// read the order in which layers saw the request.
func tag(name string) tower.Layer[string, string] {
	return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
		return tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
			return tower.Call(ctx, inner, req+name)
		})
	})
}

func TestStackOrder(t *testing.T) {
	tests := []struct {
		name   string
		layers []tower.Layer[string, string]
		want   string
	}{
		{"none", nil, "req"},
		{"one", []tower.Layer[string, string]{tag("a")}, "reqa"},
		{"first is outermost", []tower.Layer[string, string]{tag("a"), tag("b"), tag("c")}, "reqabc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := tower.Stack(tt.layers...).Wrap(tower.ServiceFunc[string, string](echo))
			got, err := tower.Call(t.Context(), svc, "req")
			if got != tt.want || err != nil {
				t.Errorf("got %q, %v; want %q, nil", got, err, tt.want)
			}
		})
	}
}

func TestStackCopiesItsList(t *testing.T) {
	layers := []tower.Layer[string, string]{tag("a"), tag("b")}
	s := tower.Stack(layers...)
	layers[0] = tag("x")
	got, _ := tower.Call(t.Context(), s.Wrap(tower.ServiceFunc[string, string](echo)), "req")
	if got != "reqab" {
		t.Errorf("got %q, want %q: Stack must not see later changes to the caller's slice", got, "reqab")
	}
}

// typedNil is a service type whose nil pointer, in a tower.Service, is
// not == nil: constructors must still refuse it.
type typedNil struct{ inner tower.Service[string, string] }

func (s *typedNil) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	return s.inner.Ready(ctx)
}

// An empty Stack is a layer like any other: it wraps a service in nothing.
func TestEmptyStackIsALayer(t *testing.T) {
	empty := tower.Stack[string, string]()
	svc := tower.Stack(empty, tower.Stack(empty, tag("a"))).Wrap(tower.ServiceFunc[string, string](echo))
	if got, err := tower.Call(context.Background(), svc, "x"); got != "xa" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", got, err, "xa")
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"Stack with a nil layer", func() {
			tower.Stack(tag("a"), nil)
		}, "tower.Stack: layer 1 is nil"},
		{"a layer that returns nil", func() {
			returnsNil := tower.LayerFunc[string, string](func(tower.Service[string, string]) tower.Service[string, string] { return nil })
			tower.Stack(tag("a"), returnsNil).Wrap(tower.ServiceFunc[string, string](echo))
		}, "tower: layer 1 (tower.LayerFunc[string,string]) returned a nil Service"},
		{"a layer that returns a typed nil", func() {
			returnsNil := tower.LayerFunc[string, string](func(tower.Service[string, string]) tower.Service[string, string] { return (*typedNil)(nil) })
			tower.Stack(returnsNil, tag("b")).Wrap(tower.ServiceFunc[string, string](echo))
		}, "tower: layer 0 (tower.LayerFunc[string,string]) returned a nil Service"},
		{"MapErr over a typed nil", func() {
			tower.MapErr[string, string]((*typedNil)(nil), func(err error) error { return err })
		}, "tower.MapErr: nil inner service"},
		{"Either with a typed nil", func() {
			tower.Either[string, string](true, tower.ServiceFunc[string, string](echo), (*typedNil)(nil))
		}, "tower.Either: nil right service"},
		{"NewPermit(nil)", func() {
			tower.NewPermit[string, string](nil, 0)
		}, "tower.NewPermit: nil Reserver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tt.want {
					t.Errorf("panicked with %v, want %q", got, tt.want)
				}
			}()
			tt.f()
		})
	}
}
