package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// build writes the proxy under dir: each library module at each of its
// tags, and at version, from HEAD, if version is not tagged; if it is,
// HEAD is served as the pseudo-version after it. It returns the version
// HEAD is served as, and writes it to the file HEAD under dir.
func build(root, dir, version string) (string, error) {
	if err := evict(); err != nil {
		return "", err
	}
	headTime, err := commitTime(root, "HEAD")
	if err != nil {
		return "", err
	}
	rev, err := git(root, "rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "", err
	}
	head := version
	for _, l := range libraries {
		out, err := git(root, "tag", "--list", l.prefix+"v*")
		if err != nil {
			return "", err
		}
		var list []string
		for _, tag := range strings.Fields(out) {
			v := strings.TrimPrefix(tag, l.prefix)
			if !semver.IsValid(v) || semver.Canonical(v) != v {
				continue
			}
			if err := write(root, dir, l, v, tag); err != nil {
				return "", err
			}
			list = append(list, v)
		}
		if !slices.Contains(list, version) {
			list = append(list, version)
		} else {
			head = module.PseudoVersion(semver.Major(version), version, headTime, strings.TrimSpace(rev))
		}
		if err := write(root, dir, l, head, "HEAD"); err != nil {
			return "", err
		}
		semver.Sort(list)
		if err := os.WriteFile(filepath.Join(modDir(dir, l), "list"), []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
			return "", err
		}
		fmt.Fprintf(os.Stderr, "modproxy: %s %s (HEAD), tagged: %s\n", l.path, head, strings.Join(slices.DeleteFunc(slices.Clone(list), func(v string) bool { return v == head }), " "))
	}
	// The version HEAD is served as, for the scripts that use the proxy.
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(head+"\n"), 0o644); err != nil {
		return "", err
	}
	return head, nil
}

// write writes the .info, .mod and .zip of library l at version v, from
// revision rev of the repository.
func write(root, dir string, l library, v, rev string) error {
	d := modDir(dir, l)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	subdir := ""
	if l.dir != "." {
		subdir = l.dir
	}
	var zipped bytes.Buffer
	if err := zip.CreateFromVCS(&zipped, module.Version{Path: l.path, Version: v}, root, rev, subdir); err != nil {
		return err
	}
	gomod, err := git(root, "show", rev+":"+filepath.ToSlash(filepath.Join(l.dir, "go.mod")))
	if err != nil {
		return err
	}
	t, err := commitTime(root, rev)
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{v, t})
	if err != nil {
		return err
	}
	for ext, data := range map[string][]byte{".info": info, ".mod": []byte(gomod), ".zip": zipped.Bytes()} {
		if err := os.WriteFile(filepath.Join(d, v+ext), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// modDir is the directory of l's files under the proxy's dir.
func modDir(dir string, l library) string {
	escaped, err := module.EscapePath(l.path)
	if err != nil {
		panic(err) // the paths above are valid
	}
	return filepath.Join(dir, filepath.FromSlash(escaped), "@v")
}

// commitTime returns the commit time of rev, in UTC.
func commitTime(root, rev string) (time.Time, error) {
	out, err := git(root, "log", "-1", "--format=%cI", rev)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(out))
	return t.UTC(), err
}

// evict removes this repository's modules from the module cache. A
// version not tagged yet is built from HEAD, so its contents change from
// commit to commit, and the go command, which takes a version it has in
// its cache as it is, would build against an older HEAD's. The cache's
// files are read-only, as the go command leaves them. (The go command
// also keeps an index of each module's packages in the build cache, by
// path and version, which no eviction here reaches: the scripts that use
// the proxy run it with GODEBUG=goindex=0.)
func evict() error {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Errorf("go env GOMODCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	if cache == "" {
		return nil
	}
	for _, d := range []string{
		filepath.Join(cache, "github.com", "towergo"),
		filepath.Join(cache, "cache", "download", "github.com", "towergo"),
	} {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}
