package sema

import "testing"

// BenchmarkAcquireRelease is the uncontended path: a unit is always free.
func BenchmarkAcquireRelease(b *testing.B) {
	s := New(1)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Acquire(ctx); err != nil {
			b.Fatal(err)
		}
		s.Release()
	}
}

// BenchmarkAcquireReleaseParallel shares a Sema that never runs out among
// GOMAXPROCS goroutines: the lock-free paths under CAS contention.
func BenchmarkAcquireReleaseParallel(b *testing.B) {
	s := New(1 << 20)
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Acquire(ctx); err != nil {
				panic(err)
			}
			s.Release()
		}
	})
}

// BenchmarkAcquireReleaseParallelContended shares one unit among
// GOMAXPROCS goroutines, so that Acquire queues and Release hands over; each
// wait allocates its waiter.
func BenchmarkAcquireReleaseParallelContended(b *testing.B) {
	s := New(1)
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Acquire(ctx); err != nil {
				panic(err)
			}
			s.Release()
		}
	})
}
