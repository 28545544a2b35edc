package load_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
)

// echo answers its request at once.
var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})

// checkLoad fails t unless s's load is want exactly.
func checkLoad(t *testing.T, s interface{ Load() float64 }, want float64) {
	t.Helper()
	if got := s.Load(); got != want {
		t.Errorf("got load %v, want %v", got, want)
	}
}
