package towerotel

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"

	"github.com/towergo/tower/metrics"
)

// An Option configures a [Sink] or a [RequestSink]. [WithAttributes] and
// [WithLatencyBuckets] apply to both; [WithKnownMethods] and
// [WithProtocols] to a RequestSink only, and NewSink fails when given one.
type Option func(*options)

type options struct {
	attrs     []attribute.KeyValue
	buckets   []float64
	methods   []string           // nil: the default ones
	protocols []metrics.Protocol // nil: all
	only      string             // the last request-only option given, for NewSink's error
}

// WithAttributes puts attrs on every measurement of the sink, such as the
// layer it is given to (attribute.String("layer", "limit")). By default
// there are none. An attribute with a key the sink sets itself is
// overridden.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(o *options) { o.attrs = append(o.attrs, attrs...) }
}

// WithLatencyBuckets sets the bucket boundaries, in seconds, increasing, of
// the latency histogram of a Sink, or of the duration histograms of a
// RequestSink. The default is [DefaultLatencyBuckets]. A View on the
// MeterProvider overrides either.
func WithLatencyBuckets(bounds ...float64) Option {
	return func(o *options) { o.buckets = append([]float64(nil), bounds...) }
}

// WithKnownMethods sets the HTTP methods, case-sensitive, a RequestSink
// records as they are; any other is recorded as "_OTHER", so that made-up
// methods cannot make series without end. The list replaces
// [DefaultKnownMethods]. It applies to a RequestSink only.
func WithKnownMethods(methods ...string) Option {
	methods = append([]string{}, methods...) // not nil: an empty list is no method
	return func(o *options) {
		o.methods = methods
		o.only = "WithKnownMethods"
	}
}

// WithProtocols sets the protocols whose request counts ([RequestsName])
// a RequestSink reports from its construction, at zero; the others' appear
// with their first request. The default is every protocol. It applies to a
// RequestSink only, and panics if a protocol is not one of package
// metrics' constants.
func WithProtocols(protocols ...metrics.Protocol) Option {
	for _, p := range protocols {
		if p == 0 || int(p) >= metrics.NumProtocols {
			panic(fmt.Sprintf("towerotel.WithProtocols: unknown protocol %v", p))
		}
	}
	protocols = append([]metrics.Protocol{}, protocols...)
	return func(o *options) {
		o.protocols = protocols
		o.only = "WithProtocols"
	}
}

// apply applies opts over the defaults.
func apply(fn string, opts []Option) (options, error) {
	o := options{buckets: DefaultLatencyBuckets()}
	err := onto(fn, &o, opts)
	return o, err
}

// onto applies opts to o, or returns an error naming fn and the position
// of the first nil option.
func onto[O any, F ~func(*O)](fn string, o *O, opts []F) error {
	for i, opt := range opts {
		if opt == nil {
			return fmt.Errorf("%s: option %d is nil", fn, i)
		}
		opt(o)
	}
	return nil
}
