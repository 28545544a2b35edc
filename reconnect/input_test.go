package reconnect_test

import (
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// A maker that returns a typed nil service (a nil pointer in the
// interface) fails the connect as one that returns nil does.
func TestTypedNilServiceIsAConnectError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mh := newReconnect(t)
		rd := towertest.GoReady(t.Context(), r)
		connect(t, mh, (*closable)(nil))
		rd.ExpectElapsed(t, 0)
		mustConnectError(t, rd.Value(t), reconnect.ErrNilService)
	})
}

// The constructors refuse nil, and typed nils (a nil pointer in the
// interface), which would fail later, at the first request.
func TestBadInput(t *testing.T) {
	maker, _ := towertest.NewMock[string, svc]()
	inner, _ := towertest.NewMock[string, string]()
	var (
		nilMaker *towertest.Mock[string, svc]
		nilInner *towertest.Mock[string, string]
	)
	tests := []struct {
		name, want string
		f          func()
	}{
		{"NewNilMaker", "reconnect.New: maker is nil", func() { reconnect.New[string, string, string](nil, target) }},
		{"NewTypedNilMaker", "reconnect.New: maker is nil", func() { reconnect.New[string, string, string](nilMaker, target) }},
		{"NewConnectedNilMaker", "reconnect.NewConnected: maker is nil", func() { reconnect.NewConnected[string, string, string](nil, target, inner) }},
		{"NewConnectedTypedNilMaker", "reconnect.NewConnected: maker is nil", func() { reconnect.NewConnected[string, string, string](nilMaker, target, inner) }},
		{"NewConnectedNilService", "reconnect.NewConnected: svc is nil", func() { reconnect.NewConnected[string, string, string](maker, target, nil) }},
		{"NewConnectedTypedNilService", "reconnect.NewConnected: svc is nil", func() { reconnect.NewConnected[string, string, string](maker, target, nilInner) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}
