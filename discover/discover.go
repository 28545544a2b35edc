package discover

import (
	"context"
	"fmt"
	"io"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// Kind says what a [Change] does to the set of endpoints.
type Kind uint8

const (
	// Insert adds the change's Service under its Key, replacing the
	// endpoint the key had: the consumer drops the old one.
	Insert Kind = iota + 1
	// Remove takes the endpoint under the change's Key out of the set, if
	// there is one.
	Remove
)

// String returns "Insert", "Remove", or "Kind(n)".
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
// Change::Insert(key, service) or Change::Remove(key). K is the key type
// and S the endpoint type.
type Change[K comparable, S any] struct {
	Kind    Kind
	Key     K
	Service S // the endpoint inserted; the zero S in a Remove
}

// A Discover is a keyed stream of changes to a set of endpoints: tower's
// Discover. Its one consumer (a balancer, or a readycache.Cache fed by
// hand) calls Next from one goroutine at a time, and applies each change
// in order; a Discover need not be safe for concurrent use. Keys are
// unique in the set; a key may be used again once removed.
type Discover[K comparable, S any] interface {
	// Next returns the next change, waiting until there is one. A change
	// available without waiting is returned even when ctx is done, as
	// Ready grants free capacity (a balancer takes in a static list that
	// way when it is built); otherwise, when ctx ends, Next returns
	// ctx.Err() unchanged.
	//
	// io.EOF means the set will not change any more: the consumer keeps
	// its endpoints and stops calling Next. Any other error is a report
	// that no change could be made this time (a DNS lookup failed): the
	// set is as it was, and the consumer may call Next again at once, as
	// the Discover paces its own retries.
	Next(ctx context.Context) (Change[K, S], error)
}

// A List is a fixed set of endpoints, keyed by their index: tower's
// ServiceList. Next returns an Insert for each endpoint, in order, and then
// io.EOF. A List is not safe for concurrent use. The zero List is empty;
// make one with [NewList].
type List[S any] struct {
	services []S
	next     int
}

// NewList returns a List of the given endpoints, under keys 0, 1, 2 and so
// on. It panics if an endpoint is nil, or holds a nil pointer.
func NewList[S any](services ...S) *List[S] {
	for i, s := range services {
		option.PanicIf(isnil.Is(s), "discover.NewList: service %d is nil", i)
	}
	return &List[S]{services: append([]S(nil), services...)}
}

// Next returns the next Insert, or io.EOF; it never waits, so it ignores ctx.
func (l *List[S]) Next(context.Context) (Change[int, S], error) {
	if l.next == len(l.services) {
		return Change[int, S]{}, io.EOF
	}
	ch := Change[int, S]{Kind: Insert, Key: l.next, Service: l.services[l.next]}
	var zero S
	l.services[l.next] = zero // the consumer owns it now
	l.next++
	return ch, nil
}

// Chan is a Discover that receives its changes from a channel, for
// discovery that pushes changes as they happen; convert a channel to it.
// Next returns io.EOF once the channel is closed and drained. A nil Chan
// never has a change: its Next waits until ctx ends.
type Chan[K comparable, S any] <-chan Change[K, S]

// Next receives the next change from the channel, preferring one already
// there to ctx's end.
func (c Chan[K, S]) Next(ctx context.Context) (Change[K, S], error) {
	var ch Change[K, S]
	var ok bool
	select {
	case ch, ok = <-c:
	default:
		select {
		case ch, ok = <-c:
		case <-ctx.Done():
			return ch, ctx.Err()
		}
	}
	if !ok {
		return ch, io.EOF
	}
	return ch, nil
}
