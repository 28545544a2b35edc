package towertest

// An Outcome is the result of a function running on a goroutine of its
// own, as started by [Go]: a Ready that may wait, a Call that waits for
// the handle to answer.
type Outcome[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// Go runs f on a goroutine of its own and returns its Outcome. Under
// testing/synctest, call synctest.Wait after Go to let the goroutine run
// until it returns or blocks; goroutines started that way one after
// another reach the service in that order.
func Go[T any](f func() (T, error)) *Outcome[T] {
	o := &Outcome[T]{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		o.val, o.err = f()
	}()
	return o
}

// Done reports whether f has returned. After synctest.Wait the answer is
// exact.
func (o *Outcome[T]) Done() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// Wait waits for f to return and returns what it returned.
func (o *Outcome[T]) Wait() (T, error) {
	<-o.done
	return o.val, o.err
}
