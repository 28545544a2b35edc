//go:build race

package balance_test

func init() { raceEnabled = true }
