package towerhttp_test

import (
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towerhttp"
)

// A retry goes to a backend its request has not tried. The dead backend,
// whose connections are refused, has the lower load, so P2C over the two
// picks it first every time; the retry goes to the live one, and every
// request is answered. So too with a LoadShed between the retry and the
// balancer, which asks the balancer with a done context.
func TestBalancedRetryGoesElsewhere(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		testRetryGoesElsewhere(t, towerhttp.ClientStack().RetryPolicy(towerhttp.NewRetryPolicy(retry.WithMaxAttempts(2))))
	})
	t.Run("retry over a LoadShed", func(t *testing.T) {
		testRetryGoesElsewhere(t, towerhttp.ClientStack().RetryPolicy(towerhttp.NewRetryPolicy(retry.WithMaxAttempts(2))).LoadShed())
	})
}

func testRetryGoesElsewhere(t *testing.T, client tower.Layer[*http.Request, *http.Response]) {
	synctest.Test(t, func(t *testing.T) {
		var dead, live atomic.Int32
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			if req.URL.Host == "dead" {
				dead.Add(1)
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
			}
			live.Add(1)
			return textResponse(req, 200, "ok", nil), nil
		})
		stack := towerhttp.ClientStack()
		tr := towerhttp.NewBalancedTransport(discover.NewList[endpoint](
			load.NewConstant(towerhttp.NewEndpoint(base, mustParse(t, "http://dead"), stack), 1),
			load.NewConstant(towerhttp.NewEndpoint(base, mustParse(t, "http://live"), stack), 2),
		), client)
		defer tr.Close()
		for i := range 20 {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			resp.Body.Close()
		}
		if dead.Load() != 20 || live.Load() != 20 {
			t.Errorf("dead tried %d times, live %d; want 20 and 20", dead.Load(), live.Load())
		}
	})
}
