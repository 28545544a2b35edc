package discover

import (
	"context"
	"fmt"
	"io"

	"github.com/towergo/tower/internal/isnil"
)

// Kind says what a [Change] does to the set of endpoints.
type Kind uint8

const (
	// Insert adds the change's Service under its Key. A key that is
	// already in the set is replaced: the consumer drops the old endpoint
	// and uses the new one.
	Insert Kind = iota + 1
	// Remove takes the endpoint under the change's Key out of the set. A
	// key that is not in the set is ignored.
	Remove
)

// String returns "Insert" or "Remove".
func (k Kind) String() string {
	switch k {
	case Insert:
		return "Insert"
	case Remove:
		return "Remove"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// A Change is one change to a keyed set of endpoints: tower's
// Change::Insert(key, service) or Change::Remove(key). K is the key type and
// S the endpoint (service) type.
type Change[K comparable, S any] struct {
	Kind Kind
	Key  K
	// Service is the endpoint inserted; it is the zero S in a Remove.
	Service S
}

// A Discover is a keyed stream of changes to a set of endpoints: tower's
// Discover. Its consumer (a balancer, or a readycache.Cache fed by hand)
// applies each change in order. Keys are unique in the set; a key may be
// used again once removed, and an Insert of a key in the set replaces its
// endpoint. A Discover has one consumer, which calls Next from one
// goroutine at a time; it need not be safe for concurrent use.
type Discover[K comparable, S any] interface {
	// Next returns the next change, waiting until there is one. A change
	// available without waiting is returned even when ctx is done, as
	// Ready grants free capacity; otherwise, when ctx ends, Next returns
	// ctx.Err() unchanged.
	//
	// io.EOF means the set will not change any more: the consumer keeps
	// its endpoints and stops calling Next. Any other error is a report
	// that no change could be made this time (a DNS lookup failed): the
	// set is as it was, and the consumer may call Next again. The Discover
	// paces its own retries, so a consumer can call Next in a loop.
	Next(ctx context.Context) (Change[K, S], error)
}

// A List is a fixed set of endpoints, keyed by their index: tower's
// ServiceList. Next returns an Insert for each endpoint, in order, and then
// io.EOF. A List is not safe for concurrent use (a Discover has one
// consumer). The zero List is empty; make one with [NewList].
type List[S any] struct {
	services []S
	next     int
}

// NewList returns a List of the given endpoints, under keys 0, 1, 2 and so
// on. It panics if an endpoint is nil, or holds a nil pointer. A List of
// no endpoints is empty: its first Next returns io.EOF.
func NewList[S any](services ...S) *List[S] {
	for i, s := range services {
		if isnil.Is(s) {
			panic(fmt.Sprintf("discover.NewList: service %d is nil", i))
		}
	}
	return &List[S]{services: append([]S(nil), services...)}
}

// Next returns an Insert of the next endpoint under its index, or io.EOF
// when all have been returned. It never waits, so it ignores ctx.
func (l *List[S]) Next(context.Context) (Change[int, S], error) {
	if l.next == len(l.services) {
		return Change[int, S]{}, io.EOF
	}
	i := l.next
	l.next++
	s := l.services[i]
	var zero S
	l.services[i] = zero // the consumer owns it now
	return Change[int, S]{Kind: Insert, Key: i, Service: s}, nil
}

// Chan is a Discover that receives its changes from a channel, for
// discovery that pushes changes as they happen (and for tests); convert a
// channel to it. Next returns io.EOF once the channel is closed and
// drained. A nil Chan never has a change: its Next waits until ctx ends.
type Chan[K comparable, S any] <-chan Change[K, S]

// Next receives the next change from the channel, waiting until there is
// one or ctx ends. A change already in the channel is returned even when
// ctx is done.
func (c Chan[K, S]) Next(ctx context.Context) (Change[K, S], error) {
	select {
	case ch, ok := <-c:
		return received(ch, ok)
	default:
	}
	select {
	case ch, ok := <-c:
		return received(ch, ok)
	case <-ctx.Done():
		return Change[K, S]{}, ctx.Err()
	}
}

func received[K comparable, S any](ch Change[K, S], ok bool) (Change[K, S], error) {
	if !ok {
		return ch, io.EOF
	}
	return ch, nil
}
