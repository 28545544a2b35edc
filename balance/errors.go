package balance

// unavailable is the type of the balancer's sentinel errors, for
// tower.IsUnavailable. Each wraps an error of its own, so two sentinels
// are never equal.
type unavailable struct{ error }

func (unavailable) Unavailable() bool { return true }
