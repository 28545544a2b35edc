package reconnect_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

// A connected service that is not ready now answers ReadyNow with its
// ctx's error: that says nothing about its health, so the Reconnect keeps
// it, neither closing it nor connecting again.
func TestNotReadyNowKeepsService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner, h := newClosable()
		h.Allow(0)
		maker, mh := towertest.NewMock[string, svc]()
		r := reconnect.NewConnected[string, string, string](maker, target, inner)
		defer r.Close()
		if _, ok, err := tower.ReadyNow[string, string](r); ok || err != nil {
			t.Fatalf("ReadyNow: got %v, %v; want not ready, no error", ok, err)
		}
		if inner.isClosed() {
			t.Error("a service that was only not ready now was closed")
		}
		checkConnects(t, mh, 0)

		// A Ready whose deadline passes keeps it too.
		ctx, cancel := context.WithCancel(t.Context())
		rd := towertest.GoReady(ctx, r)
		cancel()
		rd.ExpectError(t, context.Canceled)
		if inner.isClosed() {
			t.Error("a service whose caller gave up was closed")
		}
		checkConnects(t, mh, 0)
	})
}

// A service that fails its readiness for good while asked with a done
// ctx (ReadyNow, a LoadShed's probe) is dropped all the same, and a
// connect starts: the ctx being done does not make its error the ctx's.
func TestBrokenServiceDroppedByReadyNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner, h := newClosable()
		h.FailReady(errBroken)
		maker, mh := towertest.NewMock[string, svc]()
		r := reconnect.NewConnected[string, string, string](maker, target, inner)
		defer r.Close()
		_, ok, err := tower.ReadyNow[string, string](r)
		if ok || err != nil {
			t.Fatalf("ReadyNow: got %v, %v; want not ready (a connect under way), no error", ok, err)
		}
		if errors.Is(err, errBroken) {
			t.Fatal("the broken service's error reached the caller")
		}
		if !inner.isClosed() {
			t.Error("the broken service was not closed")
		}
		checkConnects(t, mh, 1)
	})
}
