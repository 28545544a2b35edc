package timeout

// ErrElapsed is the error of a request that did not get its response in
// time. Its message is tower's, "request timed out". Layers that wrap it
// with %w keep it visible to errors.Is.
//
// ErrElapsed is not context.DeadlineExceeded: a deadline on the caller's own
// context surfaces as that, unchanged. Like the network errors of package
// net, ErrElapsed has a Timeout method that reports true, which is how
// [tower.IsTimeout] and the adapters that ask it know it.
var ErrElapsed error = elapsed{}

type elapsed struct{}

func (elapsed) Error() string { return "request timed out" }
func (elapsed) Timeout() bool { return true }
