package guard

import "github.com/towergo/tower/internal/isnil"

// IsNil reports whether v is a nil interface, or holds a nil pointer,
// channel, func or unsafe pointer: what a constructor rejects at once,
// with an error that names it, rather than fail at the first request with
// a nil dereference far from the mistake. A typed nil pointer passed as a
// tower.Service is not == nil; IsNil sees it. A nil slice or map is a
// value, not nil: reading it works, and a type built on one can have
// methods that do (a tower.Stack of no layers is a nil slice).
func IsNil(v any) bool { return isnil.Is(v) }
