package main

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// repoRoot returns the root of the git repository around the working
// directory.
func repoRoot() (string, error) {
	out, err := git("", "rev-parse", "--show-toplevel")
	return strings.TrimSpace(out), err
}

// git runs git in dir with args and returns its standard output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// A repoModule is a module of the repository: its directory from the root, "." for the
// root's, and its path.
type repoModule struct{ dir, path string }

// checkRepo checks the go.mod files and the imports of every module of the
// repository, as the files git tracks hold them in the work tree, and
// returns the one version at which the go.mod files require the library
// modules.
func checkRepo(root string) (string, error) {
	ls, err := git(root, "ls-files", "-z")
	if err != nil {
		return "", err
	}
	files := strings.Split(strings.TrimSuffix(ls, "\x00"), "\x00")
	var mods []repoModule
	for _, f := range files {
		if path.Base(f) == "go.mod" && !strings.Contains("/"+f, "/testdata/") {
			data, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				return "", err
			}
			mf, err := modfile.Parse(f, data, nil)
			if err != nil {
				return "", err
			}
			if len(mf.Replace) > 0 {
				r := mf.Replace[0]
				return "", fmt.Errorf("%s: replace %s => %s: a go.mod must not replace, since a user's build ignores the replaces of its dependencies; this repository works in place through go.work", f, r.Old.Path, r.New.Path)
			}
			mods = append(mods, repoModule{path.Dir(f), mf.Module.Mod.Path})
		}
	}
	version, err := requiredVersion(root, mods)
	if err != nil {
		return "", err
	}
	if err := checkWork(root, version); err != nil {
		return "", err
	}
	return version, checkImports(root, files, mods)
}

// checkWork checks that go.work replaces each library module, at exactly
// the version the go.mod files require, with its directory. A workspace
// uses its modules in place of any version of them, but it still reads the
// go.mod of each version required, to build the module graph: before that
// version is published, no proxy has it, and every go command in the
// repository would fail on a fresh machine. A replace without a version is
// refused for a workspace module, so the version is named, and must follow
// the go.mod files when they move to the next.
func checkWork(root, version string) error {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return err
	}
	for _, l := range libraries {
		want := "./" + l.dir
		if l.dir == "." {
			want = "./"
		}
		ok := slices.ContainsFunc(wf.Replace, func(r *modfile.Replace) bool {
			return r.Old.Path == l.path && r.Old.Version == version &&
				r.New.Version == "" && path.Clean(r.New.Path) == path.Clean(want)
		})
		if !ok {
			return fmt.Errorf("go.work: no \"replace %s %s => %s\": the go.mod files require %s of the library modules, which a workspace must find in place, not on a proxy", l.path, version, want, version)
		}
	}
	return nil
}

// requiredVersion returns the version at which the go.mod files of mods
// require the library modules, which must be one for all.
func requiredVersion(root string, mods []repoModule) (string, error) {
	seen := map[string]string{} // version: the first requirement of it
	var versions []string
	for _, m := range mods {
		f := path.Join(m.dir, "go.mod")
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		mf, err := modfile.Parse(f, data, nil)
		if err != nil {
			return "", err
		}
		for _, r := range mf.Require {
			if !slices.ContainsFunc(libraries, func(l library) bool { return l.path == r.Mod.Path }) {
				continue
			}
			if _, ok := seen[r.Mod.Version]; !ok {
				seen[r.Mod.Version] = f + " requires " + r.Mod.Path + " " + r.Mod.Version
				versions = append(versions, r.Mod.Version)
			}
		}
	}
	switch len(versions) {
	case 0:
		return "", fmt.Errorf("no go.mod requires a library module of the repository, so no version is to be tagged")
	case 1:
		return versions[0], nil
	}
	return "", fmt.Errorf("the modules of this repository are released together, at one version, but %s and %s", seen[versions[0]], seen[versions[1]])
}

// checkImports reports an import, in a Go file of one module, of an
// internal package of another.
func checkImports(root string, files []string, mods []repoModule) error {
	// The longest directory, or path, first: the module a file or a
	// package is in is the first whose directory, or path, holds it.
	byDir := slices.Clone(mods)
	slices.SortFunc(byDir, func(a, b repoModule) int { return len(b.dir) - len(a.dir) })
	byPath := slices.Clone(mods)
	slices.SortFunc(byPath, func(a, b repoModule) int { return len(b.path) - len(a.path) })
	var bad []string
	fset := token.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || strings.Contains("/"+f, "/testdata/") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return err
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		mine := owner(byDir, func(m repoModule) bool { return m.dir == "." || strings.HasPrefix(f, m.dir+"/") })
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(strings.Split(p, "/"), "internal") {
				continue
			}
			theirs := owner(byPath, func(m repoModule) bool { return p == m.path || strings.HasPrefix(p, m.path+"/") })
			if theirs.path != "" && theirs != mine {
				bad = append(bad, fmt.Sprintf("%s: module %s imports %s, an internal package of module %s",
					fset.Position(imp.Pos()), mine.path, p, theirs.path))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("an internal package is for its own module, whose releases may change it:\n\t%s", strings.Join(bad, "\n\t"))
	}
	return nil
}

// owner returns the first of mods that holds, or the zero module.
func owner(mods []repoModule, holds func(repoModule) bool) repoModule {
	for _, m := range mods {
		if holds(m) {
			return m
		}
	}
	return repoModule{}
}
