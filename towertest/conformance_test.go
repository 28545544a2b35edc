package towertest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// The suite must fail on layers that break the contract. Each broken layer
// runs in a subprocess (TestBrokenLayer), and the failure must name the
// rule it broke.
func TestSuiteCatchesBrokenLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary once per broken layer")
	}
	for _, b := range brokenLayers {
		t.Run(b.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenLayer$/^"+b.name+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "TOWERTEST_BROKEN=1")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a layer that %s:\n%s", b.breaks, out)
			}
			if want := "--- FAIL: TestBrokenLayer/" + b.name + "/" + b.caughtBy; !strings.Contains(string(out), want) {
				t.Errorf("the layer that %s was not caught by %s; output:\n%s", b.breaks, b.caughtBy, out)
			}
		})
	}
}

func TestBrokenLayer(t *testing.T) {
	if os.Getenv("TOWERTEST_BROKEN") == "" {
		t.Skip("run by TestSuiteCatchesBrokenLayers")
	}
	for _, b := range brokenLayers {
		t.Run(b.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] { return layerOf(b.wrap) },
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}

type svc = tower.Service[string, string]

func layerOf(wrap func(inner svc) svc) tower.Layer[string, string] {
	return tower.LayerFunc[string, string](wrap)
}

var brokenLayers = []struct {
	name, breaks, caughtBy string
	wrap                   func(inner svc) svc
}{
	{"LeaksOnRelease", "does not release the inner permit", "ReleaseUnusedGivesCapacityBack",
		func(inner svc) svc { return &broken{inner: inner, leak: true} }},
	{"RefusesDoneContext", "refuses free capacity to a done context", "ReadyWithDoneContextWhenFree",
		func(inner svc) svc { return &broken{inner: inner, refuseDone: true} }},
	{"WrapsContextError", "wraps ctx.Err() in Ready", "ContextEndsWhileWaiting",
		func(inner svc) svc { return &broken{inner: inner, wrapCtxErr: true} }},
	{"ServesStaleCopies", "serves stale copies of its permits", "StaleCopyIsRefused",
		func(inner svc) svc { return newNoTicket(inner) }},
	{"DropsCallContext", "does not pass the call's context down", "CallContextReachesInner",
		func(inner svc) svc { return &broken{inner: inner, dropCtx: true} }},
	{"LeaksGoroutine", "leaves a goroutine behind", "CallReachesInnerAndAnswers",
		func(inner svc) svc { return &broken{inner: inner, leakGoroutine: true} }},
	{"GarblesEighthResponse", "changes the response of its eighth call", "ConcurrentCallers",
		func(inner svc) svc { return &broken{inner: inner, garbleFrom: 8} }},
}

// broken is a pass-through middleware with one configurable defect.
type broken struct {
	inner                        svc
	leak, refuseDone, wrapCtxErr bool
	dropCtx, leakGoroutine       bool
	// garbleFrom, if not 0, is the number of the first call whose response
	// the layer changes: only a test that makes that many calls sees it.
	garbleFrom int32
	calls      atomic.Int32
	wraps      tower.WrapPool[string, string]
}

func (b *broken) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if b.refuseDone && ctx.Err() != nil {
		return tower.Permit[string, string]{}, ctx.Err()
	}
	if b.leakGoroutine {
		go func() { select {} }()
	}
	p, err := b.inner.Ready(ctx)
	if err != nil {
		if b.wrapCtxErr && ctx.Err() != nil {
			err = fmt.Errorf("broken: %w", err)
		}
		return p, err
	}
	return b.wraps.Wrap(b, p), nil
}

func (b *broken) CallWrapped(ctx context.Context, inner tower.Permit[string, string], req string) (string, error) {
	if b.dropCtx {
		ctx = context.Background()
	}
	res, err := inner.Call(ctx, req)
	if b.garbleFrom > 0 && b.calls.Add(1) >= b.garbleFrom {
		res = "garbled"
	}
	return res, err
}

func (b *broken) ReleaseWrapped(inner tower.Permit[string, string]) {
	if !b.leak {
		inner.Release()
	}
}

// noTicket is a concurrency limit of 1 whose permits carry no ticket: a
// stale copy's Call or Release gives the limit's slot back a second time.
type noTicket struct {
	inner svc
	slot  chan struct{}
}

func newNoTicket(inner svc) *noTicket {
	n := &noTicket{inner: inner, slot: make(chan struct{}, 2)}
	n.slot <- struct{}{}
	return n
}

func (n *noTicket) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	select {
	case <-n.slot:
	default:
		select {
		case <-n.slot:
		case <-ctx.Done():
			return tower.Permit[string, string]{}, ctx.Err()
		}
	}
	p, err := n.inner.Ready(ctx)
	if err != nil {
		n.slot <- struct{}{}
		return p, err
	}
	return tower.NewPermit[string, string](&noTicketPermit{n: n, inner: p}, 0), nil
}

type noTicketPermit struct {
	n     *noTicket
	inner tower.Permit[string, string]
}

func (p *noTicketPermit) CallReserved(ctx context.Context, _ uint64, req string) (string, error) {
	defer func() { p.n.slot <- struct{}{} }()
	inner := p.inner // each copy calls the inner permit again
	return inner.Call(ctx, req)
}

func (p *noTicketPermit) ReleaseReserved(uint64) {
	inner := p.inner
	inner.Release()
	select {
	case p.n.slot <- struct{}{}:
	default:
	}
}
