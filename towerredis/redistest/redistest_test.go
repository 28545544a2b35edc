package redistest

import (
	"testing"
)

func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr()); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if ping(s.Addr()) == nil {
		t.Fatal("a killed server still answers")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := ping(s.Addr()); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Stop()
	if ping(s.Addr()) == nil {
		t.Fatal("a stopped server still answers")
	}
}
