package main

import (
	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
)

// ours returns the strategies of package adaptive, one per algorithm, each
// under a LoadShed, as its doc recommends for a server, with the package's
// defaults: nothing tuned for this server. AIMD moves on drops, and a
// server's clients' requests are not dropped before they are a second
// late, so it is given, as its doc says a server must give it, the mean
// latency above which a window counts as a drop: half the objective, a
// number about the clients, not about the server's capacity.
func ours() []strategy {
	var s []strategy
	for _, a := range []struct {
		name string
		alg  func() adaptive.Algorithm
	}{
		{"gradient2", adaptive.Gradient2()},
		{"vegas", adaptive.Vegas()},
		{"aimd", adaptive.AIMD(adaptive.AIMDTimeout(objective / 2))},
	} {
		s = append(s, strategy{a.name, ourOwn, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
			l := adaptive.New(inner, a.alg)
			return loadshed.New[int, struct{}](l), l.Limit
		}})
	}
	return s
}

// delayBased are package adaptive's delay-based algorithms, Gradient2 and
// Vegas, each under a LoadShed with the package's defaults, their limits
// read probes apart (see tracked).
func delayBased() []strategy {
	var s []strategy
	for _, a := range []struct {
		name string
		alg  func() adaptive.Algorithm
	}{
		{"gradient2", adaptive.Gradient2()},
		{"vegas", adaptive.Vegas()},
	} {
		s = append(s, strategy{a.name, ourOwn, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
			l, limit := newOurs(inner, a.alg)
			return loadshed.New[int, struct{}](l), limit
		}})
	}
	return s
}
