package weir_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestExportedSignaturesNameOnlyNameableTypes: no exported identifier of
// package weir has a signature (parameters, results, exported fields,
// methods, type parameters' constraints, alias targets) that names an
// unexported type or a type from an internal package, which a user could not
// name in their own code. It type-checks the package's source against its
// dependencies' export data.
func TestExportedSignaturesNameOnlyNameableTypes(t *testing.T) {
	pkg := typeCheckRoot(t)
	var bad []string
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		for _, why := range unnameableIn(obj, pkg) {
			bad = append(bad, fmt.Sprintf("%s: %s", name, why))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Fatalf("%d exported signatures name types a user cannot name:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// typeCheckRoot type-checks the root package's non-test files.
func typeCheckRoot(t *testing.T) *types.Package {
	t.Helper()
	exports := exportData(t)
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check("github.com/weirstream/weir", fset, parsed, nil)
	if err != nil {
		t.Fatalf("type-check the root package: %v", err)
	}
	return pkg
}

// exportData maps every dependency of the root package to its export data
// file, as the go command builds it.
func exportData(t *testing.T) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v: %s", err, stderr.String())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), " ")
		if ok && file != "" {
			m[path] = file
		}
	}
	return m
}

// unnameableIn lists what in obj's exported signature a user cannot name.
func unnameableIn(obj types.Object, pkg *types.Package) []string {
	w := &surfaceWalker{pkg: pkg, seen: map[types.Type]bool{}}
	switch o := obj.(type) {
	case *types.TypeName:
		if o.IsAlias() {
			w.walk(types.Unalias(o.Type()), "alias of")
			break
		}
		named, ok := o.Type().(*types.Named)
		if !ok {
			break
		}
		w.typeParams(named.TypeParams())
		w.walkBody(named.Underlying(), "")
		for i := 0; i < named.NumMethods(); i++ {
			m := named.Method(i)
			if m.Exported() {
				w.walk(m.Type(), "method "+m.Name())
			}
		}
	case *types.Func:
		w.walk(o.Type(), "")
	default:
		w.walk(obj.Type(), "")
	}
	return w.bad
}

// surfaceWalker visits the types a signature names, stopping at named types
// (whose own surface is checked where they are declared).
type surfaceWalker struct {
	pkg  *types.Package
	seen map[types.Type]bool
	bad  []string
}

func (w *surfaceWalker) typeParams(tps *types.TypeParamList) {
	for i := 0; i < tps.Len(); i++ {
		w.walk(tps.At(i).Constraint(), "constraint of "+tps.At(i).Obj().Name())
	}
}

func (w *surfaceWalker) report(where, what string) {
	if where != "" {
		what = where + ": " + what
	}
	w.bad = append(w.bad, what)
}

func (w *surfaceWalker) walk(t types.Type, where string) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		w.walk(types.Unalias(t), where)
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil {
			switch {
			case !obj.Exported():
				w.report(where, fmt.Sprintf("names unexported type %s.%s", obj.Pkg().Name(), obj.Name()))
			case isInternal(obj.Pkg().Path()):
				w.report(where, fmt.Sprintf("names internal type %s.%s", obj.Pkg().Path(), obj.Name()))
			}
		}
		args := t.TypeArgs()
		for i := 0; i < args.Len(); i++ {
			w.walk(args.At(i), where)
		}
	case *types.Signature:
		w.typeParams(t.TypeParams())
		for i := 0; i < t.Params().Len(); i++ {
			w.walk(t.Params().At(i).Type(), where)
		}
		for i := 0; i < t.Results().Len(); i++ {
			w.walk(t.Results().At(i).Type(), where)
		}
	default:
		w.walkBody(t, where)
	}
}

// walkBody visits the exported parts of an unnamed type.
func (w *surfaceWalker) walkBody(t types.Type, where string) {
	switch t := t.(type) {
	case *types.Pointer:
		w.walk(t.Elem(), where)
	case *types.Slice:
		w.walk(t.Elem(), where)
	case *types.Array:
		w.walk(t.Elem(), where)
	case *types.Chan:
		w.walk(t.Elem(), where)
	case *types.Map:
		w.walk(t.Key(), where)
		w.walk(t.Elem(), where)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			f := t.Field(i)
			if f.Exported() {
				w.walk(f.Type(), join(where, "field "+f.Name()))
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumExplicitMethods(); i++ {
			m := t.ExplicitMethod(i)
			if m.Exported() {
				w.walk(m.Type(), join(where, "method "+m.Name()))
			}
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			w.walk(t.EmbeddedType(i), where)
		}
	case *types.Union:
		for i := 0; i < t.Len(); i++ {
			w.walk(t.Term(i).Type(), where)
		}
	case *types.Signature, *types.Named, *types.Alias:
		w.walk(t, where)
	}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

func isInternal(path string) bool {
	return strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}
