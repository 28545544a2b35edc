package waitq_test

import (
	"fmt"

	"github.com/towergo/tower/internal/waitq"
)

// Waiters are woken oldest first; one can leave from the middle.
func Example() {
	var q waitq.Queue
	a, b, c := waitq.New(), waitq.New(), waitq.New()
	q.Push(a)
	q.Push(b)
	q.Push(c)
	q.Remove(b)
	for q.Wake(7, nil) {
	}
	fmt.Println(a.Woken(), b.Woken(), c.Woken(), a.Value, q.Len())
	// Output: true false true 7 0
}
