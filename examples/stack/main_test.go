package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// A's answer, then B's: B waited 80ms for the permit, then called.
const wantOutput = `A: ok 80 at 80ms
B: ready at 80ms, ok 60 at 140ms
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
