package proxy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/towergo/tower/discover"
)

// fileEvery is how often a backends file is read for changes.
const fileEvery = time.Second

// fileDiscover is a Discover of the backends listed in a file, one URL a
// line ("#" starts a comment), read again whenever its modification time
// or size changes: new backends are inserted before vanished ones are
// removed, so that a list replaced whole never goes through empty. A file
// that cannot be read, or lists a line that is not a backend URL, changes
// nothing: the last good list stays, and the error is reported.
type fileDiscover[S any] struct {
	path    string
	make    func(addr string) (S, error)
	seen    map[string]bool
	mod     time.Time
	size    int64
	pending []discover.Change[string, S]
}

func newFileDiscover[S any](path string, make func(string) (S, error)) (*fileDiscover[S], error) {
	f := &fileDiscover[S]{path: path, make: make, seen: map[string]bool{}}
	if _, err := f.read(); err != nil {
		return nil, err
	}
	f.mod, f.size = time.Time{}, -1 // read again on the first Next, for its changes
	return f, nil
}

// read returns the backends the file lists, in order.
func (f *fileDiscover[S]) read() ([]string, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = strings.TrimSpace(s[:i])
		}
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

func (f *fileDiscover[S]) Next(ctx context.Context) (discover.Change[string, S], error) {
	for len(f.pending) == 0 {
		if err := f.poll(); err != nil {
			return discover.Change[string, S]{}, err
		}
		if len(f.pending) > 0 {
			break
		}
		t := time.NewTimer(fileEvery)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return discover.Change[string, S]{}, ctx.Err()
		}
	}
	c := f.pending[0]
	f.pending = f.pending[1:]
	return c, nil
}

// poll reads the file if it changed, and queues the changes.
func (f *fileDiscover[S]) poll() error {
	st, err := os.Stat(f.path)
	if err != nil {
		return err
	}
	if st.ModTime().Equal(f.mod) && st.Size() == f.size {
		return nil
	}
	list, err := f.read()
	if err != nil {
		f.mod, f.size = st.ModTime(), st.Size() // reported once, until it changes again
		return err
	}
	f.mod, f.size = st.ModTime(), st.Size()
	now := map[string]bool{}
	for _, addr := range list {
		now[addr] = true
		if !f.seen[addr] {
			svc, err := f.make(addr)
			if err != nil {
				return err
			}
			f.pending = append(f.pending, discover.Change[string, S]{Kind: discover.Insert, Key: addr, Service: svc})
		}
	}
	var gone []string
	for addr := range f.seen {
		if !now[addr] {
			gone = append(gone, addr)
		}
	}
	slices.Sort(gone)
	for _, addr := range gone {
		f.pending = append(f.pending, discover.Change[string, S]{Kind: discover.Remove, Key: addr})
	}
	f.seen = now
	return nil
}
