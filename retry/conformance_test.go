package retry_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

func TestConformance(t *testing.T) {
	backoff := retry.NewExponentialBackoff(10*time.Millisecond, time.Second, 1)
	for _, tt := range []struct {
		name   string
		policy func() retry.Policy[string, string]
	}{
		{"StandardPolicy", func() retry.Policy[string, string] { return retry.NewPolicy[string, string](retry.AnyError) }},
		{"StandardPolicyBackoffBudget", func() retry.Policy[string, string] {
			return retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(5),
				retry.WithBackoff(backoff), retry.WithBudget(retry.NewTPSBudget(10*time.Second, 10, 0.2)))
		}},
		{"PolicyFuncNeverRetries", func() retry.Policy[string, string] {
			return retry.PolicyFunc[string, string](func(context.Context, *attempt) (time.Duration, bool) { return 0, false })
		}},
		{"SessionPolicy", func() retry.Policy[string, string] { return &limitSessions{n: 2} }},
		{"CannotClone", func() retry.Policy[string, string] { return cannotClone{t} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] { return retry.NewLayer(tt.policy()) },
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}
