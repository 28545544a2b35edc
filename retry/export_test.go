package retry

import "time"

// Base is ExponentialBackoff's base for an attempt, without jitter.
func (b *ExponentialBackoff) Base(attempt int) time.Duration {
	return exponential(b.min, b.max, attempt)
}

// Jitter is ExponentialBackoff's jitter for a base.
func (b *ExponentialBackoff) Jitter(base time.Duration) time.Duration { return b.jitterFor(base) }

// SetRand replaces the backoff's source of random numbers in [0, 1).
func (b *ExponentialBackoff) SetRand(f func() float64) { b.rand = f }

// SetRand replaces the backoff's source of random numbers in [0, 1).
func (b *FullJitterBackoff) SetRand(f func() float64) { b.rand = f }

// TPSAmounts returns what a TPSBudget deposits and withdraws for p.
func TPSAmounts(p float64) (deposit, withdraw int64) {
	return NewTPSBudget(time.Second, 0, p).deposit, tpsUnit
}

// Reserve returns the budget's reserve.
func (b *TPSBudget) Reserve() int64 { return b.reserve }

// Balance returns the budget's balance as of its last expiry.
func (b *TPSBudget) Balance() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sum()
}

// SatAdd is the budget's saturating addition.
func SatAdd(a, b int64) int64 { return satAdd(a, b) }
