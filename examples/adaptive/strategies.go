package main

import (
	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
)

// staticLimit is the static ConcurrencyLimit, right for the first phase
// by Little's law: a capacity of 400 per second times the wait a request
// may have (four service times, 40ms) is 16 requests in flight.
const staticLimit = 16

// A strategy is a way to protect the server: it puts a stack in front of
// the backend's service.
type strategy struct {
	name string
	role role
	// protect returns the service the clients call, and a function that
	// reads its current limit, nil for a strategy without one.
	protect func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int)
}

// role is what a strategy is in the comparison.
type role uint8

const (
	baseline role = iota // no limit, or a static one
	ourOwn               // package adaptive, one of its algorithms
	peer                 // another library's adaptive limit
)

// strategies are the ways compared, in the order they print.
func strategies() []strategy {
	s := []strategy{
		{"none", baseline, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
			return inner, nil
		}},
		{"static", baseline, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
			return loadshed.New(limit.NewConcurrency(inner, staticLimit)), func() int { return staticLimit }
		}},
	}
	s = append(s, ours()...)
	return append(s, failsafes()...)
}

// failsafes are failsafe-go's limiter with its queue and without.
func failsafes() []strategy {
	return []strategy{
		{"failsafe", peer, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
			f := newFailsafeLimit(inner, true)
			return f, f.Limit
		}},
		{"failsafe0", peer, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
			f := newFailsafeLimit(inner, false)
			return f, f.Limit
		}},
	}
}
