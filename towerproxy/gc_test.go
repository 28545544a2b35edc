package main

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestTuneGCUnlessGOGCIsSet(t *testing.T) {
	t.Setenv("GOGC", "") // restores GOGC after the test
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	os.Unsetenv("GOGC")
	tuneGC()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: the collector's percent is %d, want %d", got, gcPercent)
	}

	os.Setenv("GOGC", "100")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100: the collector's percent is %d, want the environment's 100", got)
	}
}
