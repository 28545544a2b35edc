package tower

import (
	"context"
	"errors"
	"time"
)

// A Service answers requests of type Req with responses of type Res, in two
// phases: Ready reserves capacity for one request, and the returned
// [Permit]'s Call sends it. The package doc states the contract.
type Service[Req, Res any] interface {
	// Ready waits until the service can take one more request and returns
	// the reservation, or an error, as the contract says.
	Ready(ctx context.Context) (Permit[Req, Res], error)
}

// ServiceFunc adapts an ordinary function to a [Service] that is always
// ready and reserves nothing: Ready returns at once, even with a done
// context, and each permit calls the function.
type ServiceFunc[Req, Res any] func(ctx context.Context, req Req) (Res, error)

// Ready returns a permit that calls f. It never waits and never fails.
func (f ServiceFunc[Req, Res]) Ready(context.Context) (Permit[Req, Res], error) {
	return Permit[Req, Res]{r: funcReserver[Req, Res](f)}, nil
}

// funcReserver serves the permits of a ServiceFunc. It is a func type, so
// storing it in a Permit does not allocate.
type funcReserver[Req, Res any] func(ctx context.Context, req Req) (Res, error)

func (f funcReserver[Req, Res]) CallReserved(ctx context.Context, _ uint64, req Req) (Res, error) {
	return f(ctx, req)
}

func (funcReserver[Req, Res]) ReleaseReserved(uint64) {}

// Call waits for svc to be ready, then calls it with req. ctx bounds both
// phases: its deadline covers the wait for capacity as well as the call,
// which no middleware can do (see package timeout).
func Call[Req, Res any](ctx context.Context, svc Service[Req, Res], req Req) (Res, error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		var zero Res
		return zero, err
	}
	return p.Call(ctx, req)
}

// ReadyNow asks svc whether it can take a request without waiting, by
// calling Ready with a context that is already done and carries no values.
// It returns the permit and true if capacity was free; a zero permit and
// false if svc is not ready now; and an error if svc is broken. To ask for
// a given request, use [ReadyNowFor].
func ReadyNow[Req, Res any](svc Service[Req, Res]) (Permit[Req, Res], bool, error) {
	return readyNow(svc, doneCtxs[PriorityNormal-PriorityLow])
}

// ReadyNowFor is [ReadyNow] for the request whose context is ctx, as a
// LoadShed asks: the done context passed to Ready carries ctx's [Priority]
// and no other value, so middleware that admits by priority (package
// adaptive's limit) answers as it would for that request. It allocates
// nothing, unless ctx has a value set with [WithReadyValue]: then the done
// context carries all of ctx's values.
func ReadyNowFor[Req, Res any](ctx context.Context, svc Service[Req, Res]) (Permit[Req, Res], bool, error) {
	// One lookup gives the priority and whether a value is marked.
	switch v := ctx.Value(priorityKey{}).(type) {
	case Priority:
		return readyNow(svc, doneCtxs[v-PriorityLow])
	case marked:
		return readyNow(svc, doneWith{ctx})
	}
	return readyNow(svc, doneCtxs[PriorityNormal-PriorityLow])
}

// WithReadyValue is context.WithValue for a value that middleware below a
// LoadShed reads in Ready, such as package balance's Tried: [ReadyNowFor]
// then passes all of ctx's values to Ready, at the cost of an allocation.
// key must be comparable; WithReadyValue panics if it is nil.
func WithReadyValue(ctx context.Context, key, val any) context.Context {
	if key == nil {
		panic("tower.WithReadyValue: nil key")
	}
	return &readyValueCtx{ctx, key, val}
}

// A readyValueCtx holds a value set with WithReadyValue. It answers the
// priority key with a marked priority, which WithPriority keeps, so that
// ReadyNowFor's one lookup also tells it that such a value is present.
type readyValueCtx struct {
	context.Context
	key, val any
}

// marked is the priority of a context that carries a value set with
// WithReadyValue.
type marked Priority

func (c *readyValueCtx) Value(key any) any {
	switch key {
	case c.key:
		return c.val
	case priorityKey{}:
		return marked(PriorityFrom(c.Context))
	}
	return c.Context.Value(key)
}

// doneWith is a context that is done and carries its Context's values.
type doneWith struct{ context.Context }

func (doneWith) Deadline() (time.Time, bool) { return time.Time{}, false }
func (doneWith) Done() <-chan struct{}       { return closedChan }
func (doneWith) Err() error                  { return context.Canceled }
func (doneWith) String() string              { return "tower.doneContext" }

func readyNow[Req, Res any](svc Service[Req, Res], done context.Context) (Permit[Req, Res], bool, error) {
	p, err := svc.Ready(done)
	if err == nil {
		return p, true, nil
	}
	if errors.Is(err, context.Canceled) {
		return p, false, nil
	}
	return p, false, err
}

// doneCtxs are done contexts, one per priority, made once so that handing
// one to Ready allocates nothing. The PriorityNormal one carries no value.
var doneCtxs = func() (c [NumPriorities]context.Context) {
	for i := range c {
		c[i] = doneContext{Priority(i) + PriorityLow}
	}
	return c
}()

type doneContext struct{ priority Priority }

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (doneContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (doneContext) Done() <-chan struct{}       { return closedChan }
func (doneContext) Err() error                  { return context.Canceled }
func (doneContext) String() string              { return "tower.doneContext" }

func (c doneContext) Value(key any) any {
	if _, ok := key.(priorityKey); ok && c.priority != PriorityNormal {
		return c.priority
	}
	return nil
}
