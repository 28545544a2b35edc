package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWork(t *testing.T) {
	replaces := func(version string, skip string) string {
		var b strings.Builder
		b.WriteString("go 1.26.0\n\nuse .\n\nreplace (\n")
		for _, l := range libraries {
			if l.path == skip {
				continue
			}
			dir := "./" + l.dir
			if l.dir == "." {
				dir = "./"
			}
			b.WriteString("\t" + l.path + " " + version + " => " + dir + "\n")
		}
		b.WriteString(")\n")
		return b.String()
	}
	for _, tc := range []struct {
		name, work, err string
	}{
		{"each at the version", replaces("v0.1.0", ""), ""},
		{"an older version", replaces("v0.0.9", ""), "replace github.com/towergo/tower v0.1.0 => ./"},
		{"one left out", replaces("v0.1.0", "github.com/towergo/tower/towerotel"), "towerotel v0.1.0 => ./towerotel"},
		{"none", "go 1.26.0\n\nuse .\n", "no \"replace github.com/towergo/tower v0.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "go.work"), []byte(tc.work), 0o644); err != nil {
				t.Fatal(err)
			}
			err := checkWork(root, "v0.1.0")
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("checkWork: %v, want nil", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("checkWork: %v, want an error saying %q", err, tc.err)
			}
		})
	}
}
