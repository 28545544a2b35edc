package towertest

import (
	"fmt"
	"reflect"
	"testing"
	"testing/synctest"
	"time"
)

// An Outcome is the result of a function running on a goroutine of its
// own, as started by [Go]: a Ready that may wait, a Call that waits for
// the handle to answer. It also records when the function returned, so
// that a test under testing/synctest can check the exact virtual time.
type Outcome[T any] struct {
	done       chan struct{}
	start, end time.Time
	val        T
	err        error
}

// Go runs f on a goroutine of its own and returns its Outcome. Under
// testing/synctest, call synctest.Wait after Go to let the goroutine run
// until it returns or blocks; goroutines started that way reach the
// service in the order they were started. [GoReady], [GoCall] and
// [GoRequest] do both.
func Go[T any](f func() (T, error)) *Outcome[T] {
	o := &Outcome[T]{done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(o.done)
		o.val, o.err = f()
		o.end = time.Now()
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

// Elapsed waits for f to return and returns how long after Go it did.
// Under testing/synctest that is an exact virtual duration.
func (o *Outcome[T]) Elapsed() time.Duration { return o.Since(o.start) }

// Since waits for f to return and returns how long after start it did:
// for a test that measures every outcome from its own start, whenever it
// started them.
func (o *Outcome[T]) Since(start time.Time) time.Duration {
	<-o.done
	return o.end.Sub(start)
}

// Value waits for f to return and returns its value. It fails t, and
// stops the test, if f returned an error: what the test goes on to do
// with the value, such as call a permit, would make no sense.
func (o *Outcome[T]) Value(t testing.TB) T {
	t.Helper()
	v, err := o.Wait()
	if err != nil {
		t.Fatalf("got error %v, want a %T", err, v)
	}
	return v
}

// ExpectValue waits for f to return and fails t unless it returned want
// (by reflect.DeepEqual) and no error.
func (o *Outcome[T]) ExpectValue(t testing.TB, want T) {
	t.Helper()
	if v, err := o.Wait(); err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("got %s, %v; want %s, nil", show(v), err, show(want))
	}
}

// ExpectError waits for f to return and fails t unless it returned want
// itself. It compares with ==, not errors.Is, so a wrapped error does not
// pass for want.
func (o *Outcome[T]) ExpectError(t testing.TB, want error) {
	t.Helper()
	if v, err := o.Wait(); err != want {
		t.Fatalf("got %s, %v; want error %v", show(v), err, want)
	}
}

// ExpectErrorMessage waits for f to return and fails t unless it returned
// an error whose message is msg: for errors the test did not keep, such as
// one made by errors.New where the mock was told to fail.
func (o *Outcome[T]) ExpectErrorMessage(t testing.TB, msg string) {
	t.Helper()
	if v, err := o.Wait(); err == nil || err.Error() != msg {
		t.Fatalf("got %s, %v; want error %q", show(v), err, msg)
	}
}

// ExpectElapsed waits for f to return and fails t unless it returned d
// after Go, as [Outcome.Elapsed] measures it.
func (o *Outcome[T]) ExpectElapsed(t testing.TB, d time.Duration) {
	t.Helper()
	if got := o.Elapsed(); got != d {
		t.Errorf("returned after %v, want %v", got, d)
	}
}

// ExpectPending fails t if f has returned. It calls synctest.Wait first,
// so that f has run as far as it can, and must run in a testing/synctest
// bubble.
func (o *Outcome[T]) ExpectPending(t testing.TB) {
	t.Helper()
	synctest.Wait()
	if o.Done() {
		v, err := o.Wait()
		t.Fatalf("returned %s, %v; want it still waiting", show(v), err)
	}
}

// show formats v for a failure message, quoting a string so that an empty
// or blank one is visible.
func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
