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
			b := tower.NewBuilder[string, string]()
			for _, l := range tt.layers {
				b = b.Layer(l)
			}
			got, err = tower.Call(t.Context(), b.Service(tower.ServiceFunc[string, string](echo)), "req")
			if got != tt.want || err != nil {
				t.Errorf("Builder: got %q, %v; want %q, nil", got, err, tt.want)
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

// Builders extended from a common base must not share their layers.
func TestBuilderIsAValue(t *testing.T) {
	base := tower.NewBuilder[string, string]().Layer(tag("a")).Layer(tag("b"))
	left := base.Layer(tag("l"))
	right := base.Layer(tag("r"))
	h := tower.ServiceFunc[string, string](echo)
	for _, tt := range []struct {
		b    tower.Builder[string, string]
		want string
	}{{base, "reqab"}, {left, "reqabl"}, {right, "reqabr"}} {
		if got, _ := tower.Call(t.Context(), tt.b.Service(h), "req"); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// A Builder is a Layer: a built stack nests inside another.
func TestBuilderIsALayer(t *testing.T) {
	inner := tower.NewBuilder[string, string]().Layer(tag("b")).Layer(tag("c"))
	outer := tower.NewBuilder[string, string]().Layer(tag("a")).Layer(inner).Layer(tag("d"))
	got, _ := tower.Call(t.Context(), outer.Service(tower.ServiceFunc[string, string](echo)), "req")
	if got != "reqabcd" {
		t.Errorf("got %q, want %q", got, "reqabcd")
	}
}

func TestZeroBuilder(t *testing.T) {
	var b tower.Builder[string, string]
	h := tower.ServiceFunc[string, string](echo)
	if got, _ := tower.Call(t.Context(), b.Service(h), "req"); got != "req" {
		t.Errorf("got %q, want %q", got, "req")
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
	svc := tower.NewBuilder[string, string]().Layer(empty).Layer(tower.Stack(empty, tag("a"))).Service(tower.ServiceFunc[string, string](echo))
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
		{"Builder.Layer(nil)", func() {
			tower.NewBuilder[string, string]().Layer(nil)
		}, "tower.Builder.Layer: nil Layer"},
		{"Builder.Service(nil)", func() {
			tower.NewBuilder[string, string]().Service(nil)
		}, "tower.Builder.Service: nil Service"},
		{"Builder.Service of a typed nil", func() {
			var svc *typedNil
			tower.NewBuilder[string, string]().Service(svc)
		}, "tower.Builder.Service: nil Service"},
		{"a layer that returns nil", func() {
			returnsNil := tower.LayerFunc[string, string](func(tower.Service[string, string]) tower.Service[string, string] { return nil })
			tower.NewBuilder[string, string]().Layer(tag("a")).Layer(returnsNil).Service(tower.ServiceFunc[string, string](echo))
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
