// Command modproxy builds a file-based Go module proxy from this
// repository: the library modules (the core and its adapters), at every
// version tagged, and at the version the repository's go.mod files require
// of them, built from HEAD when that version is not tagged yet. With
// GOPROXY=file://DIR,... a go command then resolves
// github.com/towergo/tower v0.1.0 as a user's will once it is released,
// before any public proxy has it.
//
// Before it builds anything it checks what a user's build would not: no
// go.mod of the repository has a replace directive (a dependency's
// replaces are ignored, so a module that needs one cannot be used), every
// go.mod requires the repository's own modules at one version, and no
// module imports another's internal packages (allowed by the path rule
// when the paths nest, but an API the other module may change between its
// releases). It prints the version HEAD is served as, and writes it to
// the file DIR/HEAD too; it exits 1, saying why, if a check fails.
//
// Usage, from anywhere in the repository:
//
//	go run ./scripts/modproxy [-o DIR] [-check] [-libraries]
//
// -check runs the checks and prints the version required, building
// nothing; -libraries prints each library module's directory, module
// path and tag prefix, in the order a release tags them.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// A library is a module a user requires, tagged at each release.
type library struct {
	dir    string // from the repository's root; "." for the core
	path   string // module path
	prefix string // of its tags: "" for the core, "towerredis/" for towerredis
}

// libraries are the modules tagged at each release, the core first: each
// requires only modules before it in the list.
var libraries = []library{
	{".", "github.com/towergo/tower", ""},
	{"towerredis", "github.com/towergo/tower/towerredis", "towerredis/"},
	{"towergrpc", "github.com/towergo/tower/towergrpc", "towergrpc/"},
	{"towerotel", "github.com/towergo/tower/towerotel", "towerotel/"},
	{"towerproxy", "github.com/towergo/tower/towerproxy", "towerproxy/"},
}

func main() {
	out := flag.String("o", "", "the directory to build the proxy in")
	check := flag.Bool("check", false, "run the checks and print the version required; build nothing")
	list := flag.Bool("libraries", false, "print each library module's directory, path and tag prefix")
	flag.Parse()
	if *list {
		for _, l := range libraries {
			fmt.Println(l.dir, l.path, l.prefix)
		}
		return
	}
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	version, err := checkRepo(root)
	if err != nil {
		fail(err)
	}
	if *check {
		fmt.Println(version)
		return
	}
	if *out == "" {
		fail(fmt.Errorf("-o DIR is required"))
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		fail(err)
	}
	head, err := build(root, dir, version)
	if err != nil {
		fail(err)
	}
	fmt.Println(head)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "modproxy:", err)
	os.Exit(1)
}
