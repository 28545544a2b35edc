package metrics_test

import (
	"testing"

	"github.com/towergo/tower/metrics"
)

// TestConstantValues states the values of the enumerations: each starts at
// 1, so that the zero value is none of them, and each Num constant is one
// more than its largest value, so that an array of that length indexes by
// every one of them.
func TestConstantValues(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"InFlight", int(metrics.InFlight), 1},
		{"Limit", int(metrics.Limit), 9},
		{"Open", int(metrics.Open), 10},
		{"Tripped", int(metrics.Tripped), 11},
		{"Ejected", int(metrics.Ejected), 12},
		{"Throttled", int(metrics.Throttled), 13},
		{"NumKinds", metrics.NumKinds, 14},
		{"OutcomeServed", int(metrics.OutcomeServed), 1},
		{"OutcomeCanceled", int(metrics.OutcomeCanceled), 6},
		{"NumOutcomes", metrics.NumOutcomes, 7},
		{"HTTPServer", int(metrics.HTTPServer), 1},
		{"GRPCClient", int(metrics.GRPCClient), 3},
		{"NumProtocols", metrics.NumProtocols, 4},
		{"ReadyWait", int(metrics.ReadyWait), 1},
		{"QueueWait", int(metrics.QueueWait), 2},
		{"RetryAttempt", int(metrics.RetryAttempt), 1},
		{"HedgeAttempt", int(metrics.HedgeAttempt), 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}
