//go:build race

package demo

// raceEnabled: the race detector slows every request several times, too
// much for a load at twice the backends' capacity to say anything.
const raceEnabled = true
