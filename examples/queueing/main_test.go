package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// The two programs' output, each under a header naming its stack: the
// inner service's lines as they happen, then each caller's.
const wantOutput = `Timeout(150ms) > Buffer(8) > ConcurrencyLimit(1)
    inner: req 1 starts at 0ms
    inner: req 1 done   at 100ms
    inner: req 2 starts at 100ms
caller: req 1 ok at 100ms
caller: req 2 "request timed out" at 150ms
caller: req 3 "request timed out" at 150ms
caller deadline 150ms over Timeout(150ms) > ConcurrencyLimit(1)
req 1 ok at 100ms
req 2 caller deadline "context deadline exceeded" at 150ms
req 3 caller deadline "context deadline exceeded" at 150ms
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
