package towerredis

// In-package: what the tests of the public API may read of internals.

import "github.com/towergo/tower"

// HeldLeases returns how many leases c renews.
func HeldLeases[Req, Res any](c *Concurrency[Req, Res]) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// IsRefusal reports whether p holds the permit that a limit failing
// closed hands out with Redis unreachable, and leaves p as it was.
func IsRefusal(p *tower.Permit[string, string]) bool { return isRefusal(p) }

// Helpers of helpers_test.go that the black-box tests use too.
type (
	Counting = counting
	Trips    = trips
)

var (
	NewClient     = newClient
	BlackHole     = blackHole
	ClosedPort    = closedPort
	Within        = within
	Refused       = refused
	OkService     = okService
	LeaseClient   = leaseClient
	LeasePatient  = leasePatient
	LeaseEcho     = leaseEcho
	LeaseCard     = leaseCard
	LeaseReadyNow = leaseReadyNow
	DoneCtx       = doneCtx
	MustReady     = mustReady
)
