package retry_test

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

type (
	handle  = towertest.Handle[string, string]
	attempt = retry.Attempt[string, string]
)

// newRetry returns a Retry following policy over a mock, and the mock's
// handle.
func newRetry(policy retry.Policy[string, string]) (*retry.Retry[string, string], *handle) {
	mock, h := towertest.NewMock[string, string]()
	return retry.New[string, string](mock, policy), h
}

// echo answers its request at once.
var echo = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return req, nil
})
