//go:build race

package retry_test

func init() { raceEnabled = true }
