package stack_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The package doc's promise: a stack of four layers over a string service,
// with one list of type arguments. Example is held to it: its source is
// type-checked, and every explicit instantiation in it counted, so that a
// type argument added to it fails this test.
func TestExampleTypeArguments(t *testing.T) {
	got := instantiations(t, "example_test.go", "Example")
	if len(got) > 1 {
		t.Errorf("Example gives %d lists of type arguments, want at most 1: %v", len(got), got)
	}
}

// The count is the one a reader makes: a type argument list on a generic
// function or type counts, wherever it is; an index into a slice or a map
// does not, nor does an instantiation the compiler infers.
func TestInstantiationsCounted(t *testing.T) {
	const src = `package p

import "github.com/towergo/tower"

func generic[T any](T) {}

func f() {
	_ = tower.ServiceFunc[string, string](nil) // 1
	var s []int
	m := map[string]int{}
	_ = s[0] + m["a"]
	generic[int](1) // 2
	generic(1)
	var _ tower.Layer[int, int] // 3
}
`
	got := instantiationsIn(t, "p.go", src, "f")
	if len(got) != 3 {
		t.Errorf("got %d instantiations, want 3: %v", len(got), got)
	}
}

// instantiations returns the explicit instantiations in the function
// named fn of the test file at path.
func instantiations(t *testing.T, path, fn string) []string {
	t.Helper()
	return instantiationsIn(t, path, nil, fn)
}

// instantiationsIn type-checks the file at path, of contents src (or read
// from path if src is nil), on its own, and returns, as source text, every
// index expression in the function fn whose index is a type.
func instantiationsIn(t *testing.T, path string, src any, fn string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: exportImporter(t, fset, f)}
	if _, err := conf.Check(f.Name.Name, fset, []*ast.File{f}, info); err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	body := funcBody(t, f, fn)
	var found []string
	ast.Inspect(body, func(n ast.Node) bool {
		var index ast.Expr
		switch e := n.(type) {
		case *ast.IndexExpr:
			index = e.Index
		case *ast.IndexListExpr:
			index = e.Indices[0]
		default:
			return true
		}
		if info.Types[index].IsType() {
			found = append(found, types.ExprString(n.(ast.Expr)))
		}
		return true
	})
	return found
}

// funcBody returns the body of the function named name in f.
func funcBody(t *testing.T, f *ast.File, name string) *ast.BlockStmt {
	t.Helper()
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return fd.Body
		}
	}
	t.Fatalf("no function %s", name)
	return nil
}

// exportImporter returns an importer of the packages f imports, and
// theirs, from the export data the go command builds for them: the
// importer of go/importer finds no package of a module by itself, and
// type-checking them all from source would take seconds.
func exportImporter(t *testing.T, fset *token.FileSet, f *ast.File) types.Importer {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build export data: %v", err)
	}
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	out, err := exec.Command(goCmd, args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, file, _ := strings.Cut(strings.TrimSpace(line), "\t")
		exports[path] = file
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
}
