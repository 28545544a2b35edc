package reconnect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// The suite wraps one mock, which stands for one connection. The maker
// models a server that went away when its connection broke: it hands out
// the mock while the mock is fine, and once the mock has failed a
// readiness check, a new connect fails with that error. So the suite's
// InnerReadyFailure sees the failure as Reconnect reports it, through
// Call.
//
// The suite asks "ready now?" of a fresh service, so the Reconnect must be
// connected before the suite starts: made with NewConnected, or made with
// New and connected by a first Ready.
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name string
		new  func(maker reconnect.MakeService[string, string, string], conn tower.Service[string, string]) *recon
	}{
		{"NewConnected", func(maker reconnect.MakeService[string, string, string], conn tower.Service[string, string]) *recon {
			return reconnect.NewConnected(maker, target, conn)
		}},
		{"ConnectedByFirstReady", func(maker reconnect.MakeService[string, string, string], _ tower.Service[string, string]) *recon {
			r := reconnect.New(maker, target)
			p, err := r.Ready(context.Background())
			if err != nil {
				panic(err)
			}
			p.Release()
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] {
					return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
						conn := &watched{Service: inner}
						maker := reconnect.MakeFunc[string, string, string](func(context.Context, string) (tower.Service[string, string], error) {
							if err := conn.failure(); err != nil {
								return nil, err
							}
							return conn, nil
						})
						return tt.new(maker, conn)
					})
				},
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}

// watched remembers the first readiness failure of the service it wraps.
type watched struct {
	tower.Service[string, string]
	mu  sync.Mutex
	err error
}

func (w *watched) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	p, err := w.Service.Ready(ctx)
	if err != nil && err != ctx.Err() {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return p, err
}

func (w *watched) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
