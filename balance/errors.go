package balance

// unavailable is the type of the balancer's sentinel errors: a balancer
// that has nothing to send a request to answers Unavailable, so that
// tower.IsUnavailable, and the adapters that ask it, know it without
// importing this package. Each sentinel wraps an error of its own, so
// that two sentinels are never equal.
type unavailable struct{ error }

func (unavailable) Unavailable() bool { return true }
