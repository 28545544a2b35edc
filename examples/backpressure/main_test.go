package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// The book's answer, seed 003.
const bookTable = `req 1: ready at   0ms, done at 100ms
req 2: ready at   0ms, done at 100ms
req 3: ready at 100ms, done at 200ms
req 4: ready at 100ms, done at 200ms
req 5: ready at 200ms, done at 300ms
`

func TestBookOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		run(&out, synctest.Wait)
		if got := out.String(); got != bookTable {
			t.Errorf("got:\n%s\nwant:\n%s", got, bookTable)
		}
	})
}
