package towerhttp_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The README's quickstart shows lines of the Examples in
// example_quickstart_test.go and example_adaptive_test.go, which go test
// compiles and runs: each of its Go blocks must be found in one of them,
// line for line and in a row, indentation aside, so that the README cannot
// show code that no longer compiles.
func TestReadmeQuickstartIsExampleCode(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var examples [][]string
	for _, name := range []string{"example_quickstart_test.go", "example_adaptive_test.go"} {
		example, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, trimmedLines(string(example)))
	}
	blocks := goBlocks(section(string(readme), "## Quickstart"))
	if len(blocks) != 3 {
		t.Fatalf("README's Quickstart has %d Go blocks, want 3 (server, client, adaptive server)", len(blocks))
	}
	for i, b := range blocks {
		if !slices.ContainsFunc(examples, func(code []string) bool { return containsRun(code, trimmedLines(b)) }) {
			t.Errorf("README's Quickstart block %d is in no Example file as it stands:\n%s", i+1, b)
		}
	}
}

// section returns the part of a Markdown text from the heading to the next
// heading of the same level, or "" if there is no such heading.
func section(md, heading string) string {
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if i := strings.Index(rest, "\n"+level); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// goBlocks returns the contents of the ```go blocks of a Markdown text.
func goBlocks(md string) []string {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(md, "```go\n")
		if !ok {
			return blocks
		}
		block, after, _ := strings.Cut(rest, "```")
		blocks, md = append(blocks, block), after
	}
}

// trimmedLines returns the lines of s without their indentation, the
// blank ones left out.
func trimmedLines(s string) []string {
	var lines []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// containsRun reports whether want is found in lines as a run of
// consecutive lines.
func containsRun(lines, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for i := range lines {
		if len(lines)-i >= len(want) && slices.Equal(lines[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
