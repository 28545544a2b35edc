// A user's program of towerotel: a Sink over an OpenTelemetry meter, fed
// by a concurrency limit, read back through a manual reader.
package main

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towerotel"
)

func main() {
	reader := sdkmetric.NewManualReader()
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("usercheck")
	sink, err := towerotel.NewSink(meter)
	if err != nil {
		panic(err)
	}
	defer sink.Close()
	echo := tower.ServiceFunc[string, string](func(_ context.Context, s string) (string, error) { return s, nil })
	svc := limit.NewConcurrency(echo, 1, limit.WithMetrics(sink))
	p, err := svc.Ready(context.Background())
	if err != nil {
		panic(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && len(s.DataPoints) == 1 && s.DataPoints[0].Value != 0 {
				fmt.Println(m.Name, s.DataPoints[0].Value)
			}
		}
	}
	p.Release()
}
