package reconnect_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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
	synctest.Wait()
	mh.ExpectNow(t, target).Respond(s)
}

// refuse fails the connect the maker must have received by now with err.
func refuse(t *testing.T, mh *makerHandle, err error) {
	t.Helper()
	synctest.Wait()
	mh.ExpectNow(t, target).Fail(err)
}

// readier is a Ready running on its own goroutine.
type readier struct {
	*towertest.Outcome[permit]
	at time.Duration // when Ready returned, since start; read it after Wait
}

// goReady starts r.Ready(ctx) and waits until it has returned or blocked.
func goReady(r svc, ctx context.Context, start time.Time) *readier {
	rd := new(readier)
	rd.Outcome = towertest.Go(func() (permit, error) {
		p, err := r.Ready(ctx)
		rd.at = time.Since(start)
		return p, err
	})
	synctest.Wait()
	return rd
}

// permit waits for Ready and fails t unless it returned a permit at
// exactly want since the start.
func (rd *readier) permit(t *testing.T, want time.Duration) permit {
	t.Helper()
	p, err := rd.Wait()
	if err != nil {
		t.Fatalf("Ready: got %v, want a permit", err)
	}
	if rd.at != want {
		t.Errorf("Ready returned at %v, want %v", rd.at, want)
	}
	return p
}

// callThrough calls p with req on its own goroutine, answers the request
// the inner mock gets with res, and fails t unless the call returns res.
func callThrough(t *testing.T, p permit, h *handle, req, res string) {
	t.Helper()
	call := towertest.Go(func() (string, error) { return p.Call(t.Context(), req) })
	synctest.Wait()
	h.ExpectNow(t, req).Respond(res)
	if got, err := call.Wait(); got != res || err != nil {
		t.Fatalf("Call: got %q, %v; want %q, nil", got, err, res)
	}
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

// readyNow asks r whether it is ready now, failing t on an error.
func readyNow(t *testing.T, r svc) (permit, bool) {
	t.Helper()
	p, ok, err := tower.ReadyNow(r)
	if err != nil {
		t.Fatalf("ReadyNow: got error %v, want none", err)
	}
	return p, ok
}

// checkConnects fails t unless the maker has been asked for want services.
func checkConnects(t *testing.T, mh *makerHandle, want int) {
	t.Helper()
	synctest.Wait()
	if got := mh.Calls(); got != want {
		t.Errorf("got %d connects, want %d", got, want)
	}
}
