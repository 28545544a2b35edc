//go:build race

package tower_test

func init() { raceEnabled = true }
