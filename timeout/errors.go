package timeout

// ErrElapsed is the error of a request that did not get its response in
// time, with tower's message, "request timed out". It is not
// context.DeadlineExceeded, which a deadline on the caller's own context
// surfaces as. Like the network errors of package net, it has a Timeout
// method that reports true, for [tower.IsTimeout].
var ErrElapsed error = elapsed{}

type elapsed struct{}

func (elapsed) Error() string { return "request timed out" }
func (elapsed) Timeout() bool { return true }
