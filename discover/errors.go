package discover

import (
	"errors"
	"fmt"
)

// ErrNoAddresses is what a [LookupError] wraps for a lookup that succeeded
// with no address at all.
var ErrNoAddresses = errors.New("no addresses")

// A LookupError reports a failed lookup, or one with no address
// ([ErrNoAddresses]); the set stays as the last good lookup left it.
type LookupError struct {
	Name string // the name looked up
	Err  error
}

// Error returns "discover: lookup ", the name, and the resolver's message.
func (e *LookupError) Error() string { return "discover: lookup " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the resolver's error.
func (e *LookupError) Unwrap() error { return e.Err }

// A ServiceError reports that the function making a service for a new
// address failed; the address is left out until the next lookup.
type ServiceError struct {
	Addr string
	Err  error
}

// Error returns "discover: making a service for ", the address, and the
// error's message.
func (e *ServiceError) Error() string {
	return "discover: making a service for " + e.Addr + ": " + e.Err.Error()
}

// Unwrap returns the error of the function that makes services.
func (e *ServiceError) Unwrap() error { return e.Err }

// ErrTooManyAddresses is what a [TruncatedError] wraps: errors.Is(err,
// ErrTooManyAddresses) tells a lookup that found more addresses than the
// DNS Discover's cap.
var ErrTooManyAddresses = errors.New("more addresses than the cap")

// A TruncatedError reports a lookup that found more addresses than the
// DNS Discover keeps ([WithMaxEndpoints]). Unlike the other reports, it
// comes with changes, which Next returns after it: the set is the
// lookup's, cut to the cap.
type TruncatedError struct {
	Name  string // the name looked up
	Found int    // the distinct addresses the lookup found
	Max   int    // the cap: how many of them are in the set
}

// Error returns "discover: lookup ", the name, and how many addresses were
// found, kept and left out.
func (e *TruncatedError) Error() string {
	return fmt.Sprintf("discover: lookup %s: found %d addresses, more than the cap of %d: %d left out", e.Name, e.Found, e.Max, e.Found-e.Max)
}

// Unwrap returns ErrTooManyAddresses.
func (e *TruncatedError) Unwrap() error { return ErrTooManyAddresses }
