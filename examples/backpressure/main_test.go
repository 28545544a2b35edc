package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// Each request takes 100ms from ready to done; the waiting is in Ready.
const wantOutput = `req 1: ready at   0ms, done at 100ms
req 2: ready at   0ms, done at 100ms
req 3: ready at 100ms, done at 200ms
req 4: ready at 100ms, done at 200ms
req 5: ready at 200ms, done at 300ms
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
