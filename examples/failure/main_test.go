package main

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
)

// The program on synctest's virtual clock: a line for the healthy run, one
// per client in order, and the verdict, which must be that ours met its
// targets. The figures move a little from run to run (see the package
// doc), so the test checks the targets, which main.go computes, rather
// than the figures.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b strings.Builder
		if err := run(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		t.Log("\n" + out)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		figures := `success=\d+\.\d\d% p50=\d+ms p99=\d+ms`
		patterns := []string{`^healthy   ` + figures + `$`}
		for _, s := range strategies() {
			patterns = append(patterns, `^`+regexp.QuoteMeta(s.name)+` +`+figures+
				` p99-after=\d+ms amplification=\d\.\d{3} stop\(b3\)=(\S+) stop\(b4\)=(\S+) back\(b4\)=(\S+)$`)
		}
		patterns = append(patterns, `^ours targets: met$`)
		if len(lines) != len(patterns) {
			t.Fatalf("got %d lines, want %d", len(lines), len(patterns))
		}
		for i, p := range patterns {
			if !regexp.MustCompile(p).MatchString(lines[i]) {
				t.Errorf("line %d: %q does not match %s", i+1, lines[i], p)
			}
		}
	})
}
