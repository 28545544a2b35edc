package load_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

// tower: pending_requests::default. Each call counts until its response
// comes back. tower's "calling without polling the response" is a call
// waiting in the mock.
func TestPendingRequestsDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewPendingRequests[string, string](mock)
		checkLoad(t, svc, 0)
		rsp0 := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "rsp0")
		checkLoad(t, svc, 1)
		rsp1 := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "rsp1")
		checkLoad(t, svc, 2)

		h.ExpectSettled(t, "rsp0").Respond("done0")
		rsp0.ExpectValue(t, "done0")
		checkLoad(t, svc, 1)
		h.ExpectSettled(t, "rsp1").Respond("done1")
		rsp1.ExpectValue(t, "done1")
		checkLoad(t, svc, 0)
	})
}

// handleCompletion makes the response the Handle itself, as tower's
// IntoHandle does: the request counts until the caller drops (here: marks
// done) what it got.
type handleCompletion struct{}

func (handleCompletion) Track(h *load.Handle, _ *load.Handle) *load.Handle { return h }

// tower: pending_requests::with_completion. The Completion moves the Handle
// into the response: the load stays up after the call returns, until the
// response is done with.
func TestPendingRequestsWithCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := tower.ServiceFunc[string, *load.Handle](func(context.Context, string) (*load.Handle, error) {
			return nil, nil
		})
		svc := load.NewPendingRequests[string, *load.Handle](inner, load.WithCompletion[*load.Handle](handleCompletion{}))
		checkLoad(t, svc, 0)

		i0, err := tower.Call(t.Context(), svc, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkLoad(t, svc, 1)
		i1, err := tower.Call(t.Context(), svc, "b")
		if err != nil {
			t.Fatal(err)
		}
		checkLoad(t, svc, 2)

		i1.Done()
		checkLoad(t, svc, 1)
		i0.Done()
		checkLoad(t, svc, 0)
		i0.Done() // a second Done does nothing
		checkLoad(t, svc, 0)
	})
}

// A call that fails is complete when it returns: the Completion never sees
// it.
func TestPendingRequestsErrorCompletesAtOnce(t *testing.T) {
	boom := errors.New("boom")
	inner := tower.ServiceFunc[string, *load.Handle](func(context.Context, string) (*load.Handle, error) {
		return nil, boom
	})
	svc := load.NewPendingRequests[string, *load.Handle](inner, load.WithCompletion[*load.Handle](handleCompletion{}))
	if _, err := tower.Call(t.Context(), svc, "a"); err != boom {
		t.Fatalf("Call: got %v, want %v", err, boom)
	}
	checkLoad(t, svc, 0)
}

// A panic in the inner call, or in the Completion, completes the request.
func TestPendingRequestsPanicCompletes(t *testing.T) {
	t.Run("Inner", func(t *testing.T) {
		inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { panic("inner exploded") })
		svc := load.NewPendingRequests[string, string](inner)
		towertest.Panics(t, "inner exploded", func() { tower.Call(t.Context(), svc, "x") })
		checkLoad(t, svc, 0)
	})
	t.Run("Completion", func(t *testing.T) {
		svc := load.NewPendingRequests[string, string](echo, load.WithCompletion[string](panicCompletion{}))
		towertest.Panics(t, "completion exploded", func() { tower.Call(t.Context(), svc, "x") })
		checkLoad(t, svc, 0)
	})
}

type panicCompletion struct{}

func (panicCompletion) Track(*load.Handle, string) string { panic("completion exploded") }

// A reservation is not a request: Ready alone counts nothing.
func TestPendingRequestsReservationIsNotPending(t *testing.T) {
	svc := load.NewPendingRequests[string, string](echo)
	p := towertest.MustReady(t, svc)
	checkLoad(t, svc, 0)
	p.Release()
	checkLoad(t, svc, 0)
}

// Constant's load never changes, and its permits are the inner service's.
func TestConstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := load.NewConstant[string, string](mock, 7)
		checkLoad(t, svc, 7)
		c := towertest.GoCall(t.Context(), towertest.MustReady(t, svc), "x")
		checkLoad(t, svc, 7)
		h.ExpectSettled(t, "x").Respond("y")
		c.ExpectValue(t, "y")
		checkLoad(t, svc, 7)
	})
}
