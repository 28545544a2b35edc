package tower_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

func echo(_ context.Context, req string) (string, error) { return req, nil }

// tower's tests/util/service_fn.rs: simple.
func TestServiceFuncCalls(t *testing.T) {
	svc := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req + 1, nil })
	got, err := tower.Call(t.Context(), svc, 1)
	if err != nil || got != 2 {
		t.Errorf("got %d, %v; want 2, nil", got, err)
	}
}

func TestServiceFuncConformance(t *testing.T) {
	towertest.ServiceSuite[string, string]{
		NewService:      func() tower.Service[string, string] { return tower.ServiceFunc[string, string](echo) },
		Request:         "hello",
		ReservesNothing: true,
	}.Run(t)
}

// tower's tests/util/oneshot.rs: service_driven_to_readiness. Call waits in
// Ready until the service is ready, then calls it.
func TestCallWaitsForReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		call := towertest.GoRequest(t.Context(), mock, "hello")
		if n := h.Calls(); n != 0 {
			t.Fatalf("got %d calls before the service was ready, want 0", n)
		}
		h.Allow(1)
		h.Expect(t, "hello").Respond("world")
		if got, err := call.Wait(); got != "world" || err != nil {
			t.Errorf("got %q, %v; want %q, nil", got, err, "world")
		}
	})
}

// A deadline on the caller's context bounds the wait in Ready too.
func TestCallDeadlineCoversReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := tower.Call(ctx, mock, "hello")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want %v", err, context.DeadlineExceeded)
		}
		if d := time.Since(start); d != 150*time.Millisecond {
			t.Errorf("gave up after %v, want 150ms", d)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("got %d reservations outstanding, want 0", n)
		}
	})
}

func TestCallReturnsReadyError(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	broken := errors.New("broken")
	h.FailReady(broken)
	if _, err := tower.Call(t.Context(), mock, "hello"); err != broken {
		t.Errorf("got %v, want %v", err, broken)
	}
}

func TestReadyNow(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()

	p, ok, err := tower.ReadyNow(mock)
	if !ok || err != nil || !p.Held() {
		t.Fatalf("ready service: got ok=%v err=%v held=%v, want a permit", ok, err, p.Held())
	}
	p.Release()

	h.Allow(0)
	p, ok, err = tower.ReadyNow(mock)
	if ok || err != nil || p.Held() {
		t.Errorf("busy service: got ok=%v err=%v held=%v, want not ready", ok, err, p.Held())
	}

	broken := errors.New("broken")
	h.FailReady(broken)
	if _, ok, err = tower.ReadyNow(mock); ok || err != broken {
		t.Errorf("broken service: got ok=%v err=%v, want %v", ok, err, broken)
	}
}

func TestZeroPermit(t *testing.T) {
	var p tower.Permit[string, string]
	if p.Held() {
		t.Error("zero Permit: Held() = true, want false")
	}
	p.Release() // does nothing
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.HasPrefix(msg, "tower: ") {
			t.Errorf("Call on the zero Permit panicked with %q, want a message that starts %q", msg, "tower: ")
		}
	}()
	p.Call(t.Context(), "hello")
}

func TestPermitReleaseAfterCall(t *testing.T) {
	p, _ := tower.ServiceFunc[string, string](echo).Ready(t.Context())
	defer p.Release() // the idiom: harmless after Call
	if got, err := p.Call(t.Context(), "hello"); got != "hello" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", got, err, "hello")
	}
	if p.Held() {
		t.Error("Held() = true after Call, want false")
	}
}

func TestTicket(t *testing.T) {
	var tk tower.Ticket
	first := tk.Token()
	if !tk.Redeem(first) {
		t.Fatal("Redeem(current token) = false, want true")
	}
	if tk.Redeem(first) {
		t.Error("Redeem(used token) = true, want false")
	}
	second := tk.Token()
	if second == first {
		t.Errorf("the token after a redeem is %d again; tokens must not repeat", second)
	}
	if !tk.Redeem(second) {
		t.Error("Redeem(new token) = false, want true")
	}
}

func TestTicketRedeemOnce(t *testing.T) {
	var tk tower.Ticket
	token := tk.Token()
	var wins sync.WaitGroup
	var n int
	var mu sync.Mutex
	for range 16 {
		wins.Go(func() {
			if tk.Redeem(token) {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
	}
	wins.Wait()
	if n != 1 {
		t.Errorf("%d concurrent Redeems of one token succeeded, want 1", n)
	}
}

func TestServiceFuncDoesNotAllocate(t *testing.T) {
	svc := tower.Service[string, string](tower.ServiceFunc[string, string](echo))
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		p, _ := svc.Ready(ctx)
		p.Call(ctx, "hello")
	})
	if allocs != 0 {
		t.Errorf("Ready + Call on a ServiceFunc: %v allocations, want 0", allocs)
	}
}

func BenchmarkServiceFunc(b *testing.B) {
	towertest.Bench(b, tower.Service[string, string](tower.ServiceFunc[string, string](echo)), "hello")
}
