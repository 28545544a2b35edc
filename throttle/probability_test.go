package throttle_test

import (
	"math"
	"testing"

	"github.com/towergo/tower/throttle"
)

// The rejection probability is max(0, (requests − K·accepts) /
// (requests + 1)), exactly, at chosen counts; and a request is rejected
// exactly when the number drawn for it is below that probability: a draw
// equal to it sends the request, the next number below rejects it.
func TestRejectionProbability(t *testing.T) {
	tests := []struct {
		name              string
		requests, accepts int
		k                 float64
		want              float64
	}{
		{"Book", 100, 40, 2, 20.0 / 101},
		{"KOneAndAHalf", 100, 40, 1.5, 40.0 / 101},
		{"KOne", 3, 1, 1, 2.0 / 4},
		{"NothingAccepted", 10, 0, 2, 10.0 / 11},
		{"OneRefused", 1, 0, 2, 1.0 / 2},
		{"OneMoreThanKTimesAccepts", 101, 50, 2, 1.0 / 102},
		{"KTimesAccepts", 100, 50, 2, 0},
		{"MoreAccepts", 100, 60, 2, 0},
		{"AllAccepted", 100, 100, 1, 0},
		{"Nothing", 0, 0, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &backend{}
			svc := counted(t, b, tt.requests, tt.accepts, throttle.WithK(tt.k), throttle.WithMaxRejection(1))
			expectProbability(t, svc, tt.want)
			if tt.want == 0 {
				return
			}
			// Ask again, with draws at the probability and just below it.
			draws := newScriptLater(t, tt.want, math.Nextafter(tt.want, 0))
			svc = throttle.New(b, throttle.NotOverloaded, throttle.WithK(tt.k), throttle.WithMaxRejection(1), throttle.WithRand(draws))
			fill(t, svc, b, tt.requests, tt.accepts)
			draws.arm()
			if rejected(t, svc, b) {
				t.Errorf("a request with a draw of %v was rejected at probability %v, want it sent", tt.want, tt.want)
			}
			if !rejected(t, svc, b) {
				t.Errorf("a request with a draw just below %v was sent, want it rejected", tt.want)
			}
		})
	}
}

// While K·accepts is at least the requests, nothing is rejected and no
// number is even drawn; one request more than that makes the probability
// 1/(requests+1).
func TestNoRejectionWhileAccepted(t *testing.T) {
	b := &backend{}
	svc := throttle.New(b, throttle.NotOverloaded, throttle.WithRand(noDraw{t}))
	for i := range 50 { // accepted, refused, accepted, refused...
		b.refuse.Store(i%2 == 1)
		send(t, svc, 1)
		expectProbability(t, svc, 0)
	}
	b.refuse.Store(true)
	send(t, svc, 1) // 51 requests, 25 accepts
	expectProbability(t, svc, 1.0/52)
}

// The probability is capped: at DefaultMaxRejection by default, at what
// WithMaxRejection says otherwise; at 1 it is the formula's, which stays
// below 1; at 0 nothing is ever rejected, and no number is drawn.
func TestMaxRejection(t *testing.T) {
	tests := []struct {
		name string
		opts []throttle.Option
		want float64
	}{
		{"Default", nil, throttle.DefaultMaxRejection},
		{"Half", []throttle.Option{throttle.WithMaxRejection(0.5)}, 0.5},
		{"One", []throttle.Option{throttle.WithMaxRejection(1)}, 1000.0 / 1001},
		{"Zero", []throttle.Option{throttle.WithMaxRejection(0)}, 0},
		{"AboveTheFormula", []throttle.Option{throttle.WithMaxRejection(0.9995)}, 1000.0 / 1001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &backend{}
			svc := counted(t, b, 1000, 0, tt.opts...)
			expectProbability(t, svc, tt.want)
		})
	}
	if throttle.DefaultMaxRejection != 0.9 {
		t.Errorf("DefaultMaxRejection: got %v, want 0.9", throttle.DefaultMaxRejection)
	}

	b := &backend{}
	svc := throttle.New(b, throttle.NotOverloaded, throttle.WithMaxRejection(0), throttle.WithRand(noDraw{t}))
	fill(t, svc, b, 1000, 0)
	if rejected(t, svc, b) {
		t.Error("a request was rejected with a cap of 0")
	}
}

// The default K is the book's 2: at 100 requests and 40 accepts the
// probability is 20/101.
func TestDefaultK(t *testing.T) {
	b := &backend{}
	svc := counted(t, b, 100, 40)
	expectProbability(t, svc, 20.0/101)
	if throttle.DefaultK != 2 {
		t.Errorf("DefaultK: got %v, want 2", throttle.DefaultK)
	}
}
