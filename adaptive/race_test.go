//go:build race

package adaptive_test

func init() { raceEnabled = true }
