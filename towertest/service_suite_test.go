package towertest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// errAnswer is the error of a service whose every call fails with it.
var errAnswer = errors.New("the answer is an error")

// The ServiceSuite passes services that keep the contract: a ServiceFunc,
// whose permits reserve nothing, and a Buffer, whose permits hold a slot of
// its queue and which the suite closes. Check judges each call: with it, a
// call that fails as expected passes; without it, only a nil error does.
func TestServiceSuiteOnServices(t *testing.T) {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	failing := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return "", errAnswer })
	tests := []struct {
		name  string
		suite towertest.ServiceSuite[string, string]
	}{
		{"ServiceFunc", towertest.ServiceSuite[string, string]{
			NewService:      func() tower.Service[string, string] { return echo },
			Request:         "hello",
			ReservesNothing: true,
		}},
		{"BufferWithCheck", towertest.ServiceSuite[string, string]{
			NewService: func() tower.Service[string, string] { return buffer.New(failing, 1) },
			Request:    "hello",
			Check: func(_ string, err error) error {
				if !errors.Is(err, errAnswer) {
					return fmt.Errorf("got %v, want %v", err, errAnswer)
				}
				return nil
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.suite.Run)
	}
}
