package balance_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
	towermetrics "github.com/towergo/tower/metrics"
)

// A P2C with outlier detection: of five endpoints, one answers every
// request with an error. At its fifth failure in a row it is ejected for
// 30s (the defaults are Envoy's), and the requests go to the four others
// meanwhile.
func ExampleWithOutlierDetection() {
	healthy := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return "hello, " + req, nil
	})
	broken := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
		return "", errors.New("503 service unavailable")
	})
	endpoints := discover.NewList[load.Service[string, string]](
		load.NewPendingRequests[string, string](healthy),
		load.NewPendingRequests[string, string](healthy),
		load.NewPendingRequests[string, string](healthy),
		load.NewPendingRequests[string, string](healthy),
		load.NewPendingRequests[string, string](broken),
	)
	counts := &towermetrics.Counts{}
	bal := balance.NewP2C(endpoints,
		balance.WithOutlierDetection(func(_ string, err error) bool { return err != nil }),
		balance.WithErrorHandler(func(err error) {
			if e, ok := errors.AsType[*balance.Ejection[int]](err); ok {
				fmt.Println(e)
			}
		}),
		balance.WithMetrics(counts),
	)
	defer bal.Close()

	failed := 0
	for range 1000 {
		if _, err := tower.Call(context.Background(), bal, "gopher"); err != nil {
			failed++
		}
	}
	fmt.Println("failed requests:", failed)
	fmt.Println("ejected:", counts.Get(towermetrics.Ejected), "ready:", bal.ReadyLen())
	// Output:
	// load balancer ejected endpoint 4 for 30s: consecutive failures: 503 service unavailable
	// failed requests: 5
	// ejected: 1 ready: 4
}
