package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower/discover"
)

// A listDiscover is a Discover of a list of backends that changes as a
// whole: set compares a new list with the set it has, by address, and
// queues the changes, new backends inserted before vanished ones are
// removed, so that a list replaced whole never goes through empty. It
// serves an upstream's static list, which a reload sets, and a backends
// file, which poll reads again when it changes.
type listDiscover struct {
	newEndpoint func(addr string) (endpoint, error)
	poll        func() error  // nil: no polling
	every       time.Duration // between polls

	mu      sync.Mutex
	seen    map[string]bool
	pending []discover.Change[string, endpoint]
	wake    chan struct{} // a token when set queued changes
}

func newListDiscover(newEndpoint func(string) (endpoint, error)) *listDiscover {
	return &listDiscover{newEndpoint: newEndpoint, seen: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// set makes list the set of backends. An address whose endpoint cannot be
// made is left out, and the first such error returned.
func (d *listDiscover) set(list []string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var first error
	now := make(map[string]bool, len(list))
	for _, addr := range list {
		if now[addr] {
			continue
		}
		if d.seen[addr] {
			now[addr] = true
			continue
		}
		svc, err := d.newEndpoint(addr)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		now[addr] = true
		d.pending = append(d.pending, discover.Change[string, endpoint]{Kind: discover.Insert, Key: addr, Service: svc})
	}
	var gone []string
	for addr := range d.seen {
		if !now[addr] {
			gone = append(gone, addr)
		}
	}
	slices.Sort(gone)
	for _, addr := range gone {
		d.pending = append(d.pending, discover.Change[string, endpoint]{Kind: discover.Remove, Key: addr})
	}
	d.seen = now
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return first
}

// Next returns the next change queued, polling the source if it has one
// and waiting until there is a change or ctx ends. With a done ctx it
// returns a change only if one is queued.
func (d *listDiscover) Next(ctx context.Context) (discover.Change[string, endpoint], error) {
	for {
		if c, ok := d.pop(); ok {
			return c, nil
		}
		if err := ctx.Err(); err != nil {
			return discover.Change[string, endpoint]{}, err
		}
		if d.poll != nil {
			if err := d.poll(); err != nil {
				return discover.Change[string, endpoint]{}, err
			}
			if c, ok := d.pop(); ok {
				return c, nil
			}
		}
		if err := d.wait(ctx); err != nil {
			return discover.Change[string, endpoint]{}, err
		}
	}
}

func (d *listDiscover) pop() (discover.Change[string, endpoint], bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pending) == 0 {
		return discover.Change[string, endpoint]{}, false
	}
	c := d.pending[0]
	d.pending[0] = discover.Change[string, endpoint]{}
	d.pending = d.pending[1:]
	return c, true
}

// wait waits for set to queue changes, for the next poll, or for ctx.
func (d *listDiscover) wait(ctx context.Context) error {
	var tick <-chan time.Time
	if d.poll != nil {
		t := time.NewTimer(d.every)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-d.wake:
		return nil
	case <-tick:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fileEvery is how often a backends file is looked at for changes.
const fileEvery = time.Second

// backendsFile is a file of backends, one URL a line ("#" starts a
// comment), read again every fileEvery and put in force when what it says
// changed: its bytes are compared, rather than its modification time,
// which a file system may keep to the second, and which an editor that
// writes twice in a second leaves unchanged. A file that cannot be read,
// has a line that is not a backend URL, or lists none, changes nothing:
// the last good list stays, and the error is reported once, until the
// file or the error changes.
type backendsFile struct {
	path    string
	d       *listDiscover
	last    []byte // the contents last put in force, or that failed
	lastErr string // the error last reported
}

// newFileDiscover returns the Discover of the backends in the file at
// path, which must list at least one now.
func newFileDiscover(path string, newEndpoint func(string) (endpoint, error)) (*listDiscover, error) {
	d := newListDiscover(newEndpoint)
	f := &backendsFile{path: path, d: d}
	if err := f.poll(); err != nil {
		return nil, err
	}
	d.poll, d.every = f.poll, fileEvery
	return d, nil
}

// poll reads the file and, if it changed, sets its list.
func (f *backendsFile) poll() error {
	data, err := os.ReadFile(f.path)
	if err == nil && bytes.Equal(data, f.last) && f.last != nil {
		return nil
	}
	var list []string
	if err == nil {
		f.last = data
		list, err = f.parse(data)
	}
	if err == nil {
		err = f.d.set(list)
	}
	if err == nil {
		f.lastErr = ""
		return nil
	}
	if err.Error() == f.lastErr {
		return nil
	}
	f.lastErr = err.Error()
	return err
}

// parse returns the backends data lists, in order.
func (f *backendsFile) parse(data []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		s, _, _ := strings.Cut(sc.Text(), "#")
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		u, err := parseURL(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", f.path, line, err)
		}
		out = append(out, u.String())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: lists no backend", f.path)
	}
	return out, nil
}
