package reconnect_test

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

type (
	svc    = tower.Service[string, string]
	permit = tower.Permit[string, string]
	handle = towertest.Handle[string, string]
	// makerHandle drives a maker built on a towertest mock: each connect
	// is a request, answered with a service or an error.
	makerHandle = towertest.Handle[string, svc]
	recon       = reconnect.Reconnect[string, string, string]
)

const target = "db-1"

var (
	errRefused = errors.New("connection refused")
	errBroken  = errors.New("connection reset")
)

// newReconnect returns a Reconnect over a mock maker, and the maker's
// handle. The Reconnect is closed when the test ends.
func newReconnect(t *testing.T) (*recon, *makerHandle) {
	maker, mh := towertest.NewMock[string, svc]()
	r := reconnect.New[string, string, string](maker, target)
	t.Cleanup(func() { r.Close() })
	return r, mh
}

// closable is a mock service with a Close method, which Reconnect must
// call when it drops the service.
type closable struct {
	*towertest.Mock[string, string]
	closed bool
	mu     sync.Mutex
}

func newClosable() (*closable, *handle) {
	m, h := towertest.NewMock[string, string]()
	return &closable{Mock: m}, h
}

func (c *closable) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *closable) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// connect answers the connect the maker must have received by now with s.
func connect(t *testing.T, mh *makerHandle, s svc) {
	t.Helper()
	mh.ExpectSettled(t, target).Respond(s)
}

// refuse fails the connect the maker must have received by now with err.
func refuse(t *testing.T, mh *makerHandle, err error) {
	t.Helper()
	mh.ExpectSettled(t, target).Fail(err)
}

// mustConnectError calls p and fails t unless the call returns a
// *ConnectError that wraps want.
func mustConnectError(t *testing.T, p permit, want error) {
	t.Helper()
	res, err := p.Call(t.Context(), "hello")
	var ce *reconnect.ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, want) {
		t.Fatalf("Call: got %q, %v; want a *ConnectError wrapping %q", res, err, want)
	}
}

// checkConnects fails t unless the maker has been asked for want services.
func checkConnects(t *testing.T, mh *makerHandle, want int) {
	t.Helper()
	synctest.Wait()
	if got := mh.Calls(); got != want {
		t.Errorf("got %d connects, want %d", got, want)
	}
}
