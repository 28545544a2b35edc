package option_test

import (
	"fmt"
	"testing"

	"github.com/towergo/tower/towerredis/internal/option"
)

type options struct{ a, b int }

type Option func(*options)

func withA(v int) Option { return func(o *options) { o.a = v } }

func TestOntoInOrderKeepsDefaults(t *testing.T) {
	o := options{a: 5, b: 6}
	option.Onto("pkg.New", &o, []Option{withA(7), withA(8)})
	if want := (options{a: 8, b: 6}); o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
}

func TestNilOptionPanics(t *testing.T) {
	defer func() {
		if got, want := fmt.Sprint(recover()), "pkg.New: option 1 is nil"; got != want {
			t.Errorf("panicked with %q, want %q", got, want)
		}
	}()
	var o options
	option.Onto("pkg.New", &o, []Option{withA(1), nil})
}

func ExampleOnto() {
	o := options{b: 4}
	option.Onto("pkg.New", &o, []Option{withA(3)})
	fmt.Println(o.a, o.b)
	// Output: 3 4
}
