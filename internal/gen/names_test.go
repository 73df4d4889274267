package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestPropertyTestsAreNamedSo: every test that runs rapid is named
// TestProperty…, so that CI's run of the properties with more checks
// (-run '^TestProperty') reaches each, and nothing else.
func TestPropertyTestsAreNamedSo(t *testing.T) {
	fset := token.NewFileSet()
	found := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			f, ok := decl.(*ast.FuncDecl)
			if !ok || f.Body == nil || !strings.HasPrefix(f.Name.Name, "Test") {
				continue
			}
			ast.Inspect(f.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Check" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "rapid" {
						found++
						if !strings.HasPrefix(f.Name.Name, "TestProperty") {
							t.Errorf("%s: %s runs rapid.Check but is not named TestProperty…", fset.Position(f.Pos()), f.Name.Name)
						}
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no test runs rapid.Check: the walk found nothing")
	}
}
