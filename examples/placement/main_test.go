package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// The three placements, as the program prints them.
const wantOutput = `A: Timeout > ConcurrencyLimit(1)
  req 1: ok 1 at 100ms
  req 2: ok 2 at 200ms
  req 3: ok 3 at 300ms
B: Timeout > Buffer > ConcurrencyLimit(1)
  req 1: ok 1 at 100ms
  req 2: err "request timed out", is Elapsed = true, at 150ms
  req 3: err "request timed out", is Elapsed = true, at 150ms
C: Buffer > Timeout > ConcurrencyLimit(1)
  req 1: ok 1 at 100ms
  req 2: ok 2 at 200ms
  req 3: ok 3 at 300ms
`

func TestOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		run(&out, synctest.Wait)
		if got := out.String(); got != wantOutput {
			t.Errorf("got:\n%s\nwant:\n%s", got, wantOutput)
		}
	})
}
