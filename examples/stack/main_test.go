package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// The book's answer, seed 002. Rust's Ok(80) is Go's ok 80.
const bookTable = `A: ok 80 at 80ms
B: ready at 80ms, ok 60 at 140ms
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
